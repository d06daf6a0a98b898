//! The controller's rules, one test (or more) each with hand-written
//! expected values, and property tests of the promises: an answer is only
//! ever taken for the pending request, the page never chooses
//! `bypassPermissions`, a prompt never carries more than 8 skills / 20
//! files and (from the page) only graph files, and no input panics.

use std::collections::{BTreeMap, BTreeSet};

use orbit_agent::{Answer, McpAction};
use orbit_core::controller::{
    DEFAULT_DENY_MESSAGE, Decision, DropReason, Dropped, DroppedItem, Facts, Files, HostFiles,
    NoPending, OptionChange, Origin, PendingCards, PickedFiles, PromptDecision, Refused,
    check_signin_url, decide, dropped_notice,
};
use orbit_types::{
    CardOption, CardQuestion, Catalog, McpServerInfo, ModelOption, PageRequest, PendingCard,
    PermissionCard, PermissionChoice, QuestionAnswer, QuestionCard, SkillInfo, SkillScope,
};
use proptest::prelude::*;
use serde_json::json;

// ---------------------------------------------------------------- fixtures

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn model(value: &str, resolved: Option<&str>) -> ModelOption {
    ModelOption {
        value: value.to_owned(),
        display_name: value.to_owned(),
        description: None,
        resolved_model: resolved.map(str::to_owned),
        is_default: value == "default",
        effort_levels: strings(&["low", "medium", "high"]),
    }
}

fn skill(name: &str) -> SkillInfo {
    SkillInfo {
        name: name.to_owned(),
        description: None,
        scope: SkillScope::Project,
        plugin: None,
        path: format!(".claude/skills/{name}/SKILL.md"),
    }
}

fn server(name: &str) -> McpServerInfo {
    McpServerInfo::named(name, "connected")
}

fn catalog() -> Catalog {
    let mut skills: Vec<SkillInfo> = ["review", "pdf", "lint", "plugin:deploy", "two words"]
        .into_iter()
        .map(skill)
        .collect();
    skills.extend((0..10).map(|i| skill(&format!("s{i}"))));
    Catalog {
        cli_version: None,
        models: vec![
            model("default", Some("claude-sonnet-5")),
            model("opus", Some("claude-opus-5-5")),
            model("haiku", None),
        ],
        efforts: strings(&["low", "medium", "high"]),
        commands: Vec::new(),
        skills,
        mcp_servers: vec![server("github"), server("echo")],
    }
}

fn graph() -> BTreeSet<String> {
    let mut files: BTreeSet<String> = ["src/a.rs", "src/b.rs", "docs/a b.md", "odd\"name.rs"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    files.extend((0..25).map(|i| format!("f/{i}.rs")));
    files
}

fn permission(request_id: &str, always: bool) -> PendingCard {
    PendingCard::Permission(PermissionCard {
        request_id: request_id.to_owned(),
        tool: "Bash".to_owned(),
        tool_use_id: Some("toolu_1".to_owned()),
        title: "Bash npm test".to_owned(),
        file: None,
        input: json!({"command": "npm test"}),
        always: always.then(|| "Always allow npm test".to_owned()),
        reason: None,
        blocked_path: None,
        subagent: None,
    })
}

fn option(label: &str) -> CardOption {
    CardOption {
        label: label.to_owned(),
        description: format!("about {label}"),
    }
}

fn questions(request_id: &str) -> PendingCard {
    PendingCard::Questions(QuestionCard {
        request_id: request_id.to_owned(),
        tool_use_id: Some("toolu_q".to_owned()),
        questions: vec![
            CardQuestion {
                question: "Which library should we use?".to_owned(),
                header: "Library".to_owned(),
                options: vec![option("date-fns"), option("luxon")],
                multi_select: false,
            },
            CardQuestion {
                question: "Which features?".to_owned(),
                header: "Features".to_owned(),
                options: vec![option("Dark mode"), option("Offline"), option("Sync")],
                multi_select: true,
            },
        ],
        subagent: None,
    })
}

/// Everything the controller is told, owned; `facts` borrows it.
struct World {
    catalog: Catalog,
    graph: BTreeSet<String>,
    cards: BTreeMap<String, PendingCard>,
    history: Vec<String>,
    keys: Vec<String>,
    busy: Vec<String>,
}

impl World {
    fn new() -> Self {
        let mut cards = BTreeMap::new();
        cards.insert("c1".to_owned(), permission("req-perm", true));
        cards.insert("c2".to_owned(), questions("req-q"));
        cards.insert("c3".to_owned(), permission("req-plain", false));
        Self {
            catalog: catalog(),
            graph: graph(),
            cards,
            history: strings(&["sess-1", "sess-2"]),
            keys: strings(&["c1", "c2", "c3", "c4"]),
            busy: strings(&["c2"]),
        }
    }

    fn facts(&self, origin: Origin) -> Facts<'_> {
        Facts {
            origin,
            trusted: true,
            catalog: Some(&self.catalog),
            files: &self.graph,
            pending: &self.cards,
            history_ids: &self.history,
            conversations: Some(&self.keys),
            busy: &self.busy,
        }
    }

    fn page(&self, request: &PageRequest) -> Result<Decision, Refused> {
        decide(request, &self.facts(Origin::Page))
    }

    fn host(&self, request: &PageRequest) -> Result<Decision, Refused> {
        decide(request, &self.facts(Origin::Host))
    }
}

fn code(result: Result<Decision, Refused>) -> &'static str {
    match result {
        Ok(decision) => panic!("expected a refusal, got {decision:?}"),
        Err(refused) => refused.code(),
    }
}

fn answer_permission(
    key: &str,
    id: &str,
    choice: PermissionChoice,
    msg: Option<&str>,
) -> PageRequest {
    PageRequest::AnswerPermission {
        key: key.to_owned(),
        request_id: id.to_owned(),
        choice,
        message: msg.map(str::to_owned),
    }
}

fn answered(key: &str, id: &str, answer: Answer) -> Decision {
    Decision::Answer {
        key: key.to_owned(),
        request_id: id.to_owned(),
        answer,
    }
}

fn opts(labels: &[&str]) -> QuestionAnswer {
    QuestionAnswer {
        options: strings(labels),
        text: None,
    }
}

fn own(text: &str) -> QuestionAnswer {
    QuestionAnswer {
        options: Vec::new(),
        text: Some(text.to_owned()),
    }
}

fn answer_questions(key: &str, id: &str, answers: Vec<QuestionAnswer>) -> PageRequest {
    PageRequest::AnswerQuestions {
        key: key.to_owned(),
        request_id: id.to_owned(),
        answers,
    }
}

fn prompt(key: Option<&str>, text: &str, skills: &[&str], files: &[&str]) -> PageRequest {
    PageRequest::Prompt {
        key: key.map(str::to_owned),
        text: text.to_owned(),
        skills: strings(skills),
        files: strings(files),
    }
}

fn prompt_decision(result: Result<Decision, Refused>) -> PromptDecision {
    match result {
        Ok(Decision::Prompt(p)) => p,
        other => panic!("expected a prompt, got {other:?}"),
    }
}

fn dropped(item: DroppedItem, name: &str, reason: DropReason) -> Dropped {
    Dropped {
        item,
        name: name.to_owned(),
        reason,
    }
}

fn mode(mode: &str) -> PageRequest {
    PageRequest::SetPermissionMode {
        mode: mode.to_owned(),
    }
}

// ------------------------------------------------------------ permissions

#[test]
fn allow_answers_allow_for_the_pending_permission() {
    let w = World::new();
    let got = w.page(&answer_permission(
        "c1",
        "req-perm",
        PermissionChoice::Allow,
        None,
    ));
    assert_eq!(got, Ok(answered("c1", "req-perm", Answer::Allow)));
    // A message sent with allow is ignored.
    let got = w.page(&answer_permission(
        "c1",
        "req-perm",
        PermissionChoice::Allow,
        Some("ignored"),
    ));
    assert_eq!(got, Ok(answered("c1", "req-perm", Answer::Allow)));
}

#[test]
fn always_only_when_the_card_offers_it() {
    let w = World::new();
    let got = w.page(&answer_permission(
        "c1",
        "req-perm",
        PermissionChoice::Always,
        None,
    ));
    assert_eq!(got, Ok(answered("c1", "req-perm", Answer::AllowAlways)));
    let got = w.page(&answer_permission(
        "c3",
        "req-plain",
        PermissionChoice::Always,
        None,
    ));
    assert_eq!(got, Err(Refused::NoAlways));
    assert_eq!(Refused::NoAlways.code(), "no_always");
}

#[test]
fn deny_carries_the_users_message_or_a_default() {
    let w = World::new();
    let deny = |msg: Option<&str>| {
        w.page(&answer_permission(
            "c1",
            "req-perm",
            PermissionChoice::Deny,
            msg,
        ))
    };
    assert_eq!(
        deny(Some("  use yarn instead \n")),
        Ok(answered(
            "c1",
            "req-perm",
            Answer::Deny {
                message: "use yarn instead".to_owned()
            }
        ))
    );
    let default = Ok(answered(
        "c1",
        "req-perm",
        Answer::Deny {
            message: DEFAULT_DENY_MESSAGE.to_owned(),
        },
    ));
    assert_eq!(deny(None), default);
    assert_eq!(deny(Some(" \t ")), default);
    assert_eq!(DEFAULT_DENY_MESSAGE, "The user denied this tool call.");
    assert_eq!(code(deny(Some(&"x".repeat(32_769)))), "bad_answer");
    assert!(deny(Some(&"x".repeat(32_768))).is_ok());
}

#[test]
fn answers_to_requests_not_pending_are_refused() {
    let w = World::new();
    for (key, id) in [
        ("c1", "req-other"), // another id
        ("c3", "req-perm"),  // the id of another conversation's card
        ("c4", "req-perm"),  // a conversation with no card
        ("c9", "req-perm"),  // no such conversation
        ("c1", ""),
    ] {
        for choice in [
            PermissionChoice::Allow,
            PermissionChoice::Always,
            PermissionChoice::Deny,
        ] {
            let got = w.page(&answer_permission(key, id, choice, None));
            assert_eq!(
                got,
                Err(Refused::NotPending {
                    key: key.to_owned(),
                    request_id: id.to_owned()
                }),
                "{key} {id} {choice:?}"
            );
        }
        assert_eq!(
            code(w.page(&answer_questions(key, id, vec![]))),
            "not_pending"
        );
        let skip = PageRequest::SkipQuestions {
            key: key.to_owned(),
            request_id: id.to_owned(),
        };
        assert_eq!(code(w.page(&skip)), "not_pending");
    }
    // Nothing pending at all.
    let facts = Facts {
        pending: &NoPending,
        ..w.facts(Origin::Host)
    };
    let got = decide(
        &answer_permission("c1", "req-perm", PermissionChoice::Allow, None),
        &facts,
    );
    assert_eq!(code(got), "not_pending");
}

#[test]
fn cards_are_answered_only_their_own_way() {
    let w = World::new();
    // A question card is not answered with allow, always or deny.
    for choice in [
        PermissionChoice::Allow,
        PermissionChoice::Always,
        PermissionChoice::Deny,
    ] {
        let got = w.page(&answer_permission("c2", "req-q", choice, None));
        assert_eq!(
            got,
            Err(Refused::WrongCard {
                request_id: "req-q".to_owned(),
                card: "question"
            })
        );
    }
    // A permission card takes no question answers and no skip.
    let got = w.page(&answer_questions("c1", "req-perm", vec![own("yes")]));
    assert_eq!(code(got), "wrong_card");
    let skip = PageRequest::SkipQuestions {
        key: "c1".to_owned(),
        request_id: "req-perm".to_owned(),
    };
    assert_eq!(code(w.page(&skip)), "wrong_card");
}

#[test]
fn the_projectors_cards_are_what_answers_are_checked_against() {
    // Several cards may wait in one conversation: any of them is pending.
    let mut state_cards = BTreeMap::new();
    state_cards.insert("c1".to_owned(), permission("a", false));
    let states = vec![orbit_types::SessionState {
        key: "c1".to_owned(),
        phase: orbit_types::HudPhase::Waiting,
        label: None,
        file: None,
        pending: vec![permission("a", false), questions("b")],
        turns: 1,
        turn_cost_usd: None,
        total_cost_usd: 0.0,
        model: None,
        permission_mode: None,
        session_id: None,
        last_outcome: None,
        error: None,
        subagents: 0,
        usage: None,
        rate_limit: None,
    }];
    assert!(states.pending_card("c1", "a").is_some());
    assert!(states.pending_card("c1", "b").is_some());
    assert!(states.pending_card("c1", "c").is_none());
    assert!(states.pending_card("c2", "a").is_none());
    assert!(state_cards.pending_card("c1", "a").is_some());
    assert!(state_cards.pending_card("c1", "b").is_none());
    let projector = orbit_core::projector::SessionProjector::new();
    assert!(projector.pending_card("c1", "a").is_none());
}

// -------------------------------------------------------------- questions

#[test]
fn question_answers_keyed_by_exact_question_text() {
    let w = World::new();
    let got = w.page(&answer_questions(
        "c2",
        "req-q",
        vec![opts(&["luxon"]), opts(&["Sync", "Dark mode"])],
    ));
    let mut expected = BTreeMap::new();
    expected.insert(
        "Which library should we use?".to_owned(),
        strings(&["luxon"]),
    );
    // Several labels in the card's order.
    expected.insert(
        "Which features?".to_owned(),
        strings(&["Dark mode", "Sync"]),
    );
    assert_eq!(
        got,
        Ok(answered("c2", "req-q", Answer::Questions(expected)))
    );

    // The user's own text, trimmed; whitespace-only text beside options is
    // no text.
    let got = w.page(&answer_questions(
        "c2",
        "req-q",
        vec![
            own("  moment, honestly \n"),
            QuestionAnswer {
                options: strings(&["Offline"]),
                text: Some("   ".to_owned()),
            },
        ],
    ));
    let mut expected = BTreeMap::new();
    expected.insert(
        "Which library should we use?".to_owned(),
        strings(&["moment, honestly"]),
    );
    expected.insert("Which features?".to_owned(), strings(&["Offline"]));
    assert_eq!(
        got,
        Ok(answered("c2", "req-q", Answer::Questions(expected)))
    );
}

#[test]
fn malformed_question_answers_are_refused() {
    let w = World::new();
    let bad = |answers: Vec<QuestionAnswer>| {
        w.page(&answer_questions("c2", "req-q", answers))
            .expect_err("refused")
    };
    let cases: Vec<(Vec<QuestionAnswer>, &str)> = vec![
        (vec![], "2 questions need 2 answers, not 0"),
        (vec![opts(&["luxon"])], "2 questions need 2 answers, not 1"),
        (
            vec![opts(&["luxon"]), opts(&["Sync"]), own("extra")],
            "2 questions need 2 answers, not 3",
        ),
        (
            vec![
                QuestionAnswer {
                    options: strings(&["luxon"]),
                    text: Some("mine".to_owned()),
                },
                opts(&["Sync"]),
            ],
            "answer 1 gives both options and its own text",
        ),
        (vec![opts(&["luxon"]), own("  ")], "answer 2 is empty"),
        (vec![opts(&[]), opts(&["Sync"])], "answer 1 is empty"),
        (
            vec![opts(&["luxon", "date-fns"]), opts(&["Sync"])],
            "question 1 takes one option",
        ),
        (
            vec![opts(&["moment"]), opts(&["Sync"])],
            "question 1 has no option `moment`",
        ),
        (
            // Labels are exact: no trimming, no case folding.
            vec![opts(&["Luxon"]), opts(&["Sync"])],
            "question 1 has no option `Luxon`",
        ),
        (
            vec![opts(&["luxon"]), opts(&["Sync", "Sync"])],
            "answer 2 names `Sync` twice",
        ),
        (
            vec![opts(&["luxon"]), own(&"x".repeat(32_769))],
            "the answers are longer than 32768 characters",
        ),
        (
            vec![own(&"x".repeat(20_000)), own(&"y".repeat(20_000))],
            "the answers are longer than 32768 characters",
        ),
    ];
    for (answers, message) in cases {
        let refused = bad(answers);
        assert_eq!(refused, Refused::BadAnswer(message.to_owned()));
        assert_eq!(refused.code(), "bad_answer");
        assert_eq!(refused.to_string(), format!("bad answer: {message}"));
    }
}

#[test]
fn skip_is_the_skip_answer() {
    let w = World::new();
    let skip = PageRequest::SkipQuestions {
        key: "c2".to_owned(),
        request_id: "req-q".to_owned(),
    };
    assert_eq!(
        w.page(&skip),
        Ok(answered("c2", "req-q", Answer::SkipQuestions))
    );
}

// ------------------------------------------------------- modes and options

#[test]
fn permission_modes_from_the_page() {
    let w = World::new();
    for m in ["default", "acceptEdits", "plan"] {
        assert_eq!(
            w.page(&mode(m)),
            Ok(Decision::SetOption(OptionChange::PermissionMode(
                m.to_owned()
            )))
        );
    }
    for m in [
        "bypassPermissions",
        "BypassPermissions",
        "BYPASSPERMISSIONS",
        " bypassPermissions",
        "bypassPermissions\n",
        "bypass_permissions",
        "bypass-permissions",
        "bypass permissions",
        "bypass",
        "by pass",
    ] {
        assert_eq!(w.page(&mode(m)), Err(Refused::BypassFromPage), "{m:?}");
    }
    for m in [
        "",
        "auto",
        "dontAsk",
        "Default",
        "acceptedits",
        " plan",
        "yolo",
    ] {
        assert_eq!(code(w.page(&mode(m))), "bad_mode", "{m:?}");
    }
}

#[test]
fn bypass_only_from_the_host_and_only_spelled_exactly() {
    let w = World::new();
    assert_eq!(
        w.host(&mode("bypassPermissions")),
        Ok(Decision::SetOption(OptionChange::PermissionMode(
            "bypassPermissions".to_owned()
        )))
    );
    assert_eq!(w.host(&mode("plan")).map(|_| ()), Ok(()));
    for m in ["BypassPermissions", " bypassPermissions", "bypass", "auto"] {
        assert_eq!(code(w.host(&mode(m))), "bad_mode", "{m:?}");
    }
}

#[test]
fn models_are_checked_against_the_catalog() {
    let w = World::new();
    let set = |m: Option<&str>| PageRequest::SetModel {
        model: m.map(str::to_owned),
    };
    for m in [
        "opus",
        "claude-opus-5-5",
        "haiku",
        "default",
        "claude-sonnet-5",
    ] {
        assert_eq!(
            w.page(&set(Some(m))),
            Ok(Decision::SetOption(OptionChange::Model(Some(m.to_owned()))))
        );
    }
    assert_eq!(
        w.page(&set(None)),
        Ok(Decision::SetOption(OptionChange::Model(None)))
    );
    assert_eq!(
        w.page(&set(Some("gpt-4"))),
        Err(Refused::UnknownModel {
            model: "gpt-4".to_owned()
        })
    );
    // Without a catalog: checked as a model name.
    let no_catalog = Facts {
        catalog: None,
        ..w.facts(Origin::Page)
    };
    assert!(decide(&set(Some("opus[1m]")), &no_catalog).is_ok());
    assert!(decide(&set(Some("claude-whatever-9")), &no_catalog).is_ok());
    for m in ["", "--dangerously-skip-permissions", "a b", "opus;rm"] {
        assert_eq!(
            code(decide(&set(Some(m)), &no_catalog)),
            "unknown_model",
            "{m:?}"
        );
    }
}

#[test]
fn effort_from_the_fixed_set() {
    let w = World::new();
    let set = |e: Option<&str>| PageRequest::SetEffort {
        effort: e.map(str::to_owned),
    };
    for e in ["low", "medium", "high", "xhigh", "max"] {
        assert_eq!(
            w.page(&set(Some(e))),
            Ok(Decision::SetOption(OptionChange::Effort(Some(
                e.to_owned()
            ))))
        );
    }
    assert_eq!(
        w.page(&set(None)),
        Ok(Decision::SetOption(OptionChange::Effort(None)))
    );
    for e in ["", "LOW", " high", "extreme", "min"] {
        assert_eq!(code(w.page(&set(Some(e)))), "bad_effort", "{e:?}");
    }
}

// ---------------------------------------------------------------- prompts

#[test]
fn prompts_are_refused_in_an_untrusted_workspace() {
    let w = World::new();
    for origin in [Origin::Page, Origin::Host] {
        let facts = Facts {
            trusted: false,
            ..w.facts(origin)
        };
        let got = decide(&prompt(None, "hello", &[], &[]), &facts);
        assert_eq!(got, Err(Refused::Untrusted));
        assert_eq!(Refused::Untrusted.code(), "untrusted");
    }
}

#[test]
fn empty_prompts_and_busy_or_unknown_conversations_are_refused() {
    let w = World::new();
    assert_eq!(
        w.page(&prompt(None, "", &[], &[])),
        Err(Refused::EmptyPrompt)
    );
    assert_eq!(
        w.page(&prompt(None, " \n\t", &["review"], &["src/a.rs"])),
        Err(Refused::EmptyPrompt)
    );
    assert_eq!(
        w.page(&prompt(Some("c2"), "go on", &[], &[])),
        Err(Refused::Busy {
            key: "c2".to_owned()
        })
    );
    assert_eq!(
        code(w.page(&prompt(Some("c7"), "go on", &[], &[]))),
        "unknown_conversation"
    );
    let p = prompt_decision(w.page(&prompt(Some("c1"), "go on", &[], &[])));
    assert_eq!(p.key.as_deref(), Some("c1"));
}

#[test]
fn a_prompt_with_skills_and_files_is_encoded() {
    let w = World::new();
    let p = prompt_decision(w.page(&prompt(
        None,
        "fix it",
        &["review", "/pdf", "review"],
        &["src/a.rs", "docs/a b.md", "src/a.rs"],
    )));
    assert_eq!(
        p,
        PromptDecision {
            key: None,
            prompt: "fix it".to_owned(),
            text: "/review fix it\n\nAlso use these skills: /pdf.\n\n@src/a.rs @\"docs/a b.md\""
                .to_owned(),
            skills: strings(&["review", "pdf"]),
            files: strings(&["src/a.rs", "docs/a b.md"]),
            dropped: Vec::new(),
        }
    );
    assert_eq!(p.notice(), None);
}

#[test]
fn skills_outside_the_catalog_and_past_eight_are_dropped() {
    let w = World::new();
    let p = prompt_decision(w.page(&prompt(
        None,
        "go",
        &[
            "foo",
            "s0",
            "s1",
            "s2",
            "s3",
            "s4",
            "s5",
            "s6",
            "s7",
            "s8",
            "two words",
            "s9",
        ],
        &[],
    )));
    assert_eq!(
        p.skills,
        strings(&["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"])
    );
    assert_eq!(
        p.dropped,
        vec![
            dropped(DroppedItem::Skill, "foo", DropReason::NotInCatalog),
            dropped(DroppedItem::Skill, "s8", DropReason::OverLimit),
            dropped(DroppedItem::Skill, "two words", DropReason::Unusable),
            dropped(DroppedItem::Skill, "s9", DropReason::OverLimit),
        ]
    );
    assert_eq!(
        p.notice().as_deref(),
        Some(
            "Dropped 1 skill not in the catalog (foo), 2 skills over the limit of 8 (s8, s9) \
             and 1 skill whose name can't be sent as a slash command (two words)"
        )
    );
    // Without a catalog no skill is kept.
    let facts = Facts {
        catalog: None,
        ..w.facts(Origin::Page)
    };
    let p = prompt_decision(decide(&prompt(None, "go", &["review"], &[]), &facts));
    assert!(p.skills.is_empty());
    assert_eq!(p.text, "go");
    assert_eq!(
        p.notice().as_deref(),
        Some("Dropped 1 skill not in the catalog (review)")
    );
}

#[test]
fn the_page_names_absolute_files_only_when_the_editor_s_dialog_returned_them() {
    let w = World::new();
    let picked_file = tempfile::NamedTempFile::new().unwrap();
    let other_file = tempfile::NamedTempFile::new().unwrap();
    let picked_path = picked_file.path().to_str().unwrap().to_owned();
    let other = other_file.path().to_str().unwrap().to_owned();
    let gone = "/no/such/picked.md".to_owned();
    let picked = vec![picked_path.clone(), gone.clone()];
    let files = PickedFiles {
        files: &w.graph,
        picked: &picked,
    };
    let facts = Facts {
        files: &files,
        ..w.facts(Origin::Page)
    };
    let p = prompt_decision(decide(
        &prompt(
            None,
            "look",
            &[],
            &["src/a.rs", &picked_path, &other, &gone],
        ),
        &facts,
    ));
    assert_eq!(p.files, strings(&["src/a.rs", &picked_path]));
    assert_eq!(
        p.dropped,
        vec![
            dropped(DroppedItem::File, &other, DropReason::OutsideGraph),
            dropped(DroppedItem::File, &gone, DropReason::OutsideGraph),
        ]
    );
    // Picked files give the page nothing else of the host's: no bypass.
    let bypass = decide(
        &PageRequest::SetPermissionMode {
            mode: "bypassPermissions".into(),
        },
        &facts,
    );
    assert!(bypass.is_err(), "{bypass:?}");
}

#[test]
fn the_page_names_graph_files_only() {
    let w = World::new();
    let tmp = tempfile::NamedTempFile::new().unwrap();
    let outside = tmp.path().to_str().unwrap().to_owned();
    let page_files = HostFiles(&w.graph); // even able to see the disk, the page gets graph files only
    let facts = Facts {
        files: &page_files,
        ..w.facts(Origin::Page)
    };
    let p = prompt_decision(decide(
        &prompt(
            None,
            "look",
            &[],
            &["src/a.rs", &outside, "../etc/passwd", "odd\"name.rs"],
        ),
        &facts,
    ));
    assert_eq!(p.files, strings(&["src/a.rs"]));
    assert_eq!(
        p.dropped,
        vec![
            dropped(DroppedItem::File, &outside, DropReason::OutsideGraph),
            dropped(DroppedItem::File, "../etc/passwd", DropReason::OutsideGraph),
            dropped(DroppedItem::File, "odd\"name.rs", DropReason::Unusable),
        ]
    );
    assert_eq!(
        p.notice().unwrap(),
        format!(
            "Dropped 2 files outside the workspace graph ({outside}, ../etc/passwd) \
             and 1 file whose path can't be sent as an @ mention (odd\"name.rs)"
        )
    );
}

#[test]
fn the_host_also_names_existing_absolute_files() {
    let w = World::new();
    let tmp = tempfile::NamedTempFile::new().unwrap();
    let existing = tmp.path().to_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().to_str().unwrap().to_owned();
    let host_files = HostFiles(&w.graph);
    let facts = Facts {
        files: &host_files,
        ..w.facts(Origin::Host)
    };
    let p = prompt_decision(decide(
        &prompt(
            None,
            "look",
            &[],
            &[
                "src/b.rs",
                &existing,
                "/no/such/file.rs",
                "not/in/graph.rs",
                &folder,
            ],
        ),
        &facts,
    ));
    assert_eq!(p.files, vec!["src/b.rs".to_owned(), existing.clone()]);
    assert_eq!(p.text, format!("look\n\n@src/b.rs @{existing}"));
    assert_eq!(
        p.notice().unwrap(),
        format!(
            "Dropped 3 files neither in the workspace graph nor an existing absolute path \
             (/no/such/file.rs, not/in/graph.rs, {folder})"
        )
    );
    // The plain graph (no HostFiles) knows no host file.
    let p = prompt_decision(w.host(&prompt(None, "look", &[], &[&existing])));
    assert!(p.files.is_empty());
}

#[test]
fn files_past_twenty_are_dropped_the_first_twenty_kept() {
    let w = World::new();
    let names: Vec<String> = (0..25).map(|i| format!("f/{i}.rs")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let p = prompt_decision(w.page(&prompt(None, "all", &[], &refs)));
    assert_eq!(p.files, names[..20].to_vec());
    assert_eq!(p.text.matches(" @").count() + 1, 20);
    assert_eq!(
        p.notice().as_deref(),
        Some("Dropped 5 files over the limit of 20 (f/20.rs, f/21.rs, f/22.rs, f/23.rs, f/24.rs)")
    );
}

#[test]
fn dropped_notice_wording() {
    assert_eq!(dropped_notice(&[]), None);
    assert_eq!(
        dropped_notice(&[
            dropped(DroppedItem::File, "a", DropReason::OutsideGraph),
            dropped(DroppedItem::Skill, "foo", DropReason::NotInCatalog),
            dropped(DroppedItem::File, "b", DropReason::OutsideGraph),
        ])
        .as_deref(),
        Some(
            "Dropped 1 skill not in the catalog (foo) and 2 files outside the workspace graph (a, b)"
        )
    );
    let many: Vec<Dropped> = (0..8)
        .map(|i| {
            dropped(
                DroppedItem::File,
                &format!("x{i}"),
                DropReason::OutsideGraph,
            )
        })
        .collect();
    assert_eq!(
        dropped_notice(&many).as_deref(),
        Some("Dropped 8 files outside the workspace graph (x0, x1, x2, x3, x4, +3 more)")
    );
    // Names are one line and shortened.
    let long = format!("evil\nname{}", "z".repeat(100));
    let notice = dropped_notice(&[
        dropped(DroppedItem::Skill, &long, DropReason::NotInCatalog),
        dropped(DroppedItem::Skill, "", DropReason::Unusable),
    ])
    .unwrap();
    assert_eq!(
        notice,
        format!(
            "Dropped 1 skill not in the catalog (evil name{}…) and 1 skill whose name can't be \
             sent as a slash command (\"\")",
            "z".repeat(51)
        )
    );
}

// ------------------------------------------------ history, MCP, stop, ...

#[test]
fn continuing_only_an_id_of_the_last_list() {
    let w = World::new();
    let cont = |id: &str| PageRequest::Continue { id: id.to_owned() };
    assert_eq!(
        w.page(&cont("sess-2")),
        Ok(Decision::Continue {
            id: "sess-2".to_owned()
        })
    );
    for id in ["sess-3", "", "SESS-1", "sess-1 "] {
        assert_eq!(code(w.page(&cont(id))), "unknown_history_id", "{id:?}");
    }
    let none_sent = Facts {
        history_ids: &[],
        ..w.facts(Origin::Host)
    };
    assert_eq!(
        code(decide(&cont("sess-1"), &none_sent)),
        "unknown_history_id"
    );
    let untrusted = Facts {
        trusted: false,
        ..w.facts(Origin::Page)
    };
    assert_eq!(decide(&cont("sess-1"), &untrusted), Err(Refused::Untrusted));
}

#[test]
fn mcp_actions_on_listed_servers_from_the_fixed_set() {
    let w = World::new();
    let act = |server: &str, action: &str| PageRequest::McpAction {
        server: server.to_owned(),
        action: action.to_owned(),
    };
    for (word, action) in [
        ("reconnect", McpAction::Reconnect),
        ("enable", McpAction::Enable),
        ("disable", McpAction::Disable),
        ("signin", McpAction::SignIn),
        ("signout", McpAction::SignOut),
    ] {
        assert_eq!(
            w.page(&act("github", word)),
            Ok(Decision::Mcp {
                server: "github".to_owned(),
                action
            })
        );
    }
    assert_eq!(
        w.page(&act("gitlab", "reconnect")),
        Err(Refused::UnknownServer {
            server: "gitlab".to_owned()
        })
    );
    assert_eq!(code(w.page(&act("GitHub", "reconnect"))), "unknown_server");
    for word in ["delete", "", "Reconnect", "mcp_reconnect"] {
        assert_eq!(
            code(w.page(&act("echo", word))),
            "unknown_action",
            "{word:?}"
        );
    }
    let no_catalog = Facts {
        catalog: None,
        ..w.facts(Origin::Page)
    };
    assert_eq!(
        code(decide(&act("github", "reconnect"), &no_catalog)),
        "unknown_server"
    );
    let untrusted = Facts {
        trusted: false,
        ..w.facts(Origin::Page)
    };
    assert_eq!(
        code(decide(&act("github", "reconnect"), &untrusted)),
        "untrusted"
    );
}

#[test]
fn signin_urls_are_http_or_https_only() {
    for ok in [
        "https://auth.example.com/authorize?client_id=a&state=b#frag",
        "http://localhost:8080/callback",
        "HTTPS://Example.COM",
        "http://127.0.0.1:1/",
        "http://[::1]:3000/x",
        "https://example.com.",
        "https://my_host.internal/p",
    ] {
        let url = check_signin_url(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        assert_eq!(url.as_str(), ok);
    }
    assert_eq!(
        check_signin_url("https://auth.example.com:8443/a")
            .unwrap()
            .host(),
        "auth.example.com"
    );
    assert_eq!(
        check_signin_url("http://[::1]:3000/x").unwrap().host(),
        "[::1]"
    );
    for bad in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,hi",
        "ftp://example.com/",
        "http:/example.com",
        "//example.com/",
        "https://",
        "https:///path",
        "https://user:pw@example.com/",
        "http://user:pass@host/",
        "https://xn--exmple-cua.com/",
        "javascript:alert(1)//http://example.com",
        "file:///",
        "https://example.com@evil.com/",
        "https://exa mple.com/",
        " https://example.com/",
        "https://example.com/\n",
        "https://example.com\\@evil.com/",
        "https://exämple.com/",
        "https://example.com:0/",
        "https://example.com:65536/",
        "https://example.com:/",
        "https://example.com:80a/",
        "https://-example.com/",
        "https://example..com/",
        "https://[::1/",
        "https://[nope]/",
        "https://%65xample.com/",
        "",
    ] {
        let refused = check_signin_url(bad).expect_err(bad);
        assert_eq!(refused.code(), "bad_url", "{bad:?}");
    }
    let too_long = format!("https://example.com/{}", "a".repeat(9000));
    assert_eq!(check_signin_url(&too_long).unwrap_err().code(), "bad_url");
    // Its Debug names the host only: the rest may carry one-time state.
    let url = check_signin_url("https://auth.example.com/a?state=secret123").unwrap();
    let debug = format!("{url:?}");
    assert!(
        debug.contains("auth.example.com") && !debug.contains("secret123"),
        "{debug}"
    );
}

#[test]
fn stop_stop_all_and_new_conversation() {
    let w = World::new();
    let stop = |key: &str| PageRequest::Stop {
        key: key.to_owned(),
    };
    assert_eq!(
        w.page(&stop("c4")),
        Ok(Decision::Stop {
            key: "c4".to_owned()
        })
    );
    assert_eq!(
        w.page(&stop("c8")),
        Err(Refused::UnknownConversation {
            key: "c8".to_owned()
        })
    );
    assert_eq!(
        Refused::UnknownConversation { key: String::new() }.code(),
        "unknown_conversation"
    );
    // Nothing known, untrusted: still allowed.
    let graph = BTreeSet::new();
    let bare = Facts::new(Origin::Page, &graph, &NoPending);
    assert_eq!(
        decide(&stop("c8"), &bare),
        Ok(Decision::Stop {
            key: "c8".to_owned()
        })
    );
    assert_eq!(
        decide(&PageRequest::StopAll {}, &bare),
        Ok(Decision::StopAll)
    );
    assert_eq!(
        decide(&PageRequest::NewConversation {}, &bare),
        Ok(Decision::NewConversation)
    );
}

#[test]
fn refusals_become_the_pages_refused_message() {
    let w = World::new();
    let request = mode("bypassPermissions");
    let refused = w.page(&request).unwrap_err();
    let refusal = refused.refusal(request.kind());
    assert_eq!(
        refusal,
        orbit_types::Refusal {
            request: "setPermissionMode".to_owned(),
            code: "bypass_from_page".to_owned(),
            message: "bypassPermissions can only be chosen in the host's settings, never from \
                      the page"
                .to_owned(),
        }
    );
    // User strings in messages are one line and shortened.
    let refused = w
        .page(&PageRequest::Continue {
            id: format!("a\nb{}", "c".repeat(200)),
        })
        .unwrap_err();
    let message = refused.to_string();
    assert!(
        !message.contains('\n') && message.chars().count() < 130,
        "{message}"
    );
}

#[test]
fn every_code_is_distinct() {
    let all = [
        Refused::Untrusted,
        Refused::EmptyPrompt,
        Refused::Busy { key: String::new() },
        Refused::UnknownConversation { key: String::new() },
        Refused::NotPending {
            key: String::new(),
            request_id: String::new(),
        },
        Refused::WrongCard {
            request_id: String::new(),
            card: "question",
        },
        Refused::NoAlways,
        Refused::BadAnswer(String::new()),
        Refused::BypassFromPage,
        Refused::BadMode {
            mode: String::new(),
        },
        Refused::UnknownModel {
            model: String::new(),
        },
        Refused::BadEffort {
            effort: String::new(),
        },
        Refused::UnknownHistoryId { id: String::new() },
        Refused::UnknownServer {
            server: String::new(),
        },
        Refused::UnknownAction {
            action: String::new(),
        },
        Refused::BadUrl("x"),
    ];
    let codes: BTreeSet<&str> = all.iter().map(Refused::code).collect();
    assert_eq!(codes.len(), all.len());
    assert_eq!(
        codes.into_iter().collect::<Vec<_>>(),
        [
            "bad_answer",
            "bad_effort",
            "bad_mode",
            "bad_url",
            "busy",
            "bypass_from_page",
            "empty_prompt",
            "no_always",
            "not_pending",
            "unknown_action",
            "unknown_conversation",
            "unknown_history_id",
            "unknown_model",
            "unknown_server",
            "untrusted",
            "wrong_card",
        ]
    );
}

// ------------------------------------------------------------- properties

fn choice() -> impl Strategy<Value = PermissionChoice> {
    prop_oneof![
        Just(PermissionChoice::Allow),
        Just(PermissionChoice::Always),
        Just(PermissionChoice::Deny),
    ]
}

fn question_answer() -> impl Strategy<Value = QuestionAnswer> {
    (
        proptest::collection::vec(
            prop_oneof![
                Just("luxon".to_owned()),
                Just("Sync".to_owned()),
                Just("Dark mode".to_owned()),
                ".{0,8}",
            ],
            0..4,
        ),
        proptest::option::of(".{0,12}"),
    )
        .prop_map(|(options, text)| QuestionAnswer { options, text })
}

/// Keys and ids near the pending ones, and anything.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("c1".to_owned()),
        Just("c2".to_owned()),
        Just("c3".to_owned()),
        ".{0,6}",
    ]
}

fn request_id() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("req-perm".to_owned()),
        Just("req-q".to_owned()),
        Just("req-plain".to_owned()),
        Just("req-perm ".to_owned()),
        Just("REQ-Q".to_owned()),
        ".{0,10}",
    ]
}

fn answer_request() -> impl Strategy<Value = PageRequest> {
    prop_oneof![
        (
            key(),
            request_id(),
            choice(),
            proptest::option::of(".{0,20}")
        )
            .prop_map(
                |(key, request_id, choice, message)| PageRequest::AnswerPermission {
                    key,
                    request_id,
                    choice,
                    message,
                }
            ),
        (
            key(),
            request_id(),
            proptest::collection::vec(question_answer(), 0..4)
        )
            .prop_map(|(key, request_id, answers)| PageRequest::AnswerQuestions {
                key,
                request_id,
                answers,
            }),
        (key(), request_id())
            .prop_map(|(key, request_id)| PageRequest::SkipQuestions { key, request_id }),
    ]
}

/// `bypassPermissions` in random case, with whitespace, `-`, `_` or `.`
/// scattered through it.
fn bypass_variant() -> impl Strategy<Value = String> {
    let word = "bypassPermissions";
    (
        proptest::collection::vec(any::<bool>(), word.len()),
        proptest::collection::vec(
            prop_oneof![
                4 => Just(""),
                1 => Just(" "),
                1 => Just("\t"),
                1 => Just("-"),
                1 => Just("_"),
                1 => Just("."),
                1 => Just("\u{a0}"),
            ],
            word.len() + 1,
        ),
    )
        .prop_map(move |(upper, seps)| {
            let mut out = String::new();
            for (i, c) in word.chars().enumerate() {
                out.push_str(seps[i]);
                if upper[i] {
                    out.extend(c.to_uppercase());
                } else {
                    out.extend(c.to_lowercase());
                }
            }
            out.push_str(seps[word.len()]);
            out
        })
}

fn skill_name() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => (0..10u8).prop_map(|i| format!("s{i}")),
        1 => Just("review".to_owned()),
        1 => Just("/pdf".to_owned()),
        1 => Just("two words".to_owned()),
        1 => ".{0,10}",
    ]
}

fn file_name() -> impl Strategy<Value = String> {
    prop_oneof![
        24 => (0..25u8).prop_map(|i| format!("f/{i}.rs")),
        1 => Just("src/a.rs".to_owned()),
        1 => Just("docs/a b.md".to_owned()),
        1 => Just("odd\"name.rs".to_owned()),
        1 => Just("/etc/passwd".to_owned()),
        1 => Just("../src/a.rs".to_owned()),
        1 => ".{0,12}",
    ]
}

fn any_request() -> impl Strategy<Value = PageRequest> {
    let s = || ".{0,16}";
    prop_oneof![
        (
            proptest::option::of(key()),
            ".{0,20}",
            proptest::collection::vec(skill_name(), 0..12),
            proptest::collection::vec(file_name(), 0..30)
        )
            .prop_map(|(key, text, skills, files)| PageRequest::Prompt {
                key,
                text,
                skills,
                files,
            }),
        answer_request(),
        s().prop_map(|mode| PageRequest::SetPermissionMode { mode }),
        proptest::option::of(s()).prop_map(|model| PageRequest::SetModel { model }),
        proptest::option::of(s()).prop_map(|effort| PageRequest::SetEffort { effort }),
        key().prop_map(|key| PageRequest::Stop { key }),
        Just(PageRequest::StopAll {}),
        Just(PageRequest::NewConversation {}),
        s().prop_map(|id| PageRequest::Continue { id }),
        (s(), s()).prop_map(|(server, action)| PageRequest::McpAction { server, action }),
    ]
}

fn is_pending(key: &str, id: &str) -> bool {
    matches!(
        (key, id),
        ("c1", "req-perm") | ("c2", "req-q") | ("c3", "req-plain")
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// (1) An answer whose (key, request id) is not the pending one is
    /// refused `not_pending`, whatever it says, from the page or the host.
    #[test]
    fn answers_to_anything_but_the_pending_request_are_refused(
        request in answer_request(),
        host in any::<bool>(),
    ) {
        let w = World::new();
        let (key, id) = match &request {
            PageRequest::AnswerPermission { key, request_id, .. }
            | PageRequest::AnswerQuestions { key, request_id, .. }
            | PageRequest::SkipQuestions { key, request_id } => (key.clone(), request_id.clone()),
            _ => unreachable!(),
        };
        let got = if host { w.host(&request) } else { w.page(&request) };
        if is_pending(&key, &id) {
            // Taken only as its own card's kind of answer.
            if let Ok(Decision::Answer { key: k, request_id, answer }) = &got {
                prop_assert_eq!(k, &key);
                prop_assert_eq!(request_id, &id);
                let question_card = key == "c2";
                let question_answer =
                    matches!(answer, Answer::Questions(_) | Answer::SkipQuestions);
                prop_assert_eq!(question_card, question_answer);
            }
        } else {
            prop_assert_eq!(got.map_err(|r| r.code()), Err("not_pending"));
        }
    }

    /// (2) `bypassPermissions` from the page is refused in any casing and
    /// spacing; from the host only the exact spelling passes.
    #[test]
    fn bypass_from_the_page_is_always_refused(variant in bypass_variant()) {
        let w = World::new();
        let got = w.page(&mode(&variant));
        prop_assert_eq!(got, Err(Refused::BypassFromPage));
        let host = w.host(&mode(&variant));
        prop_assert_eq!(host.is_ok(), variant == "bypassPermissions");
    }

    /// (2b) From the page, a mode passes only if it is exactly one of the
    /// three.
    #[test]
    fn the_page_chooses_only_the_three_modes(m in prop_oneof![".{0,20}".boxed(), bypass_variant().boxed()]) {
        let w = World::new();
        let ok = w.page(&mode(&m)).is_ok();
        prop_assert_eq!(ok, ["default", "acceptEdits", "plan"].contains(&m.as_str()));
    }

    /// (3) A prompt from the page carries at most 8 catalog skills and 20
    /// graph files; everything sent is kept, dropped, or a repeat.
    #[test]
    fn prompts_carry_limited_catalog_skills_and_graph_files(
        text in "[a-z][a-z ]{0,11}",
        skills in proptest::collection::vec(skill_name(), 0..24),
        files in proptest::collection::vec(file_name(), 0..60),
    ) {
        let w = World::new();
        let request = PageRequest::Prompt { key: None, text: text.clone(), skills: skills.clone(), files: files.clone() };
        match w.page(&request) {
            Ok(Decision::Prompt(p)) => {
                prop_assert!(p.skills.len() <= 8);
                prop_assert!(p.files.len() <= 20);
                let catalog: BTreeSet<&str> = w.catalog.skills.iter().map(|s| s.name.as_str()).collect();
                for s in &p.skills {
                    prop_assert!(catalog.contains(s.as_str()), "skill {s}");
                }
                for f in &p.files {
                    prop_assert!(w.graph.contains(f), "file {f}");
                }
                let unique = |v: &[String]| v.iter().collect::<BTreeSet<_>>().len() == v.len();
                prop_assert!(unique(&p.skills) && unique(&p.files));
                for s in &skills {
                    let name = s.trim().trim_start_matches('/');
                    let kept = p.skills.iter().any(|k| k == name);
                    let gone = p.dropped.iter().any(|d| d.item == DroppedItem::Skill && d.name == *s);
                    prop_assert!(kept || gone, "skill {s:?} neither kept nor dropped");
                }
                for f in &files {
                    let kept = p.files.contains(f);
                    let gone = p.dropped.iter().any(|d| d.item == DroppedItem::File && d.name == *f);
                    prop_assert!(kept || gone, "file {f:?} neither kept nor dropped");
                }
                prop_assert_eq!(p.notice().is_some(), !p.dropped.is_empty());
                prop_assert_eq!(p.prompt, text);
            }
            other => prop_assert!(false, "not a prompt: {other:?}"),
        }
    }

    /// No input panics, from either side, with or without the facts; every
    /// refusal has a one-line message.
    #[test]
    fn nothing_panics(request in any_request(), host in any::<bool>(), bare in any::<bool>(), trusted in any::<bool>()) {
        let w = World::new();
        let origin = if host { Origin::Host } else { Origin::Page };
        let graph = BTreeSet::new();
        let facts = if bare {
            Facts { trusted, ..Facts::new(origin, &graph, &NoPending) }
        } else {
            Facts { trusted, ..w.facts(origin) }
        };
        if let Err(refused) = decide(&request, &facts) {
            let message = refused.to_string();
            prop_assert!(!message.contains(['\n', '\r']), "{message:?}");
            let refusal = refused.refusal(request.kind());
            prop_assert_eq!(refusal.code, refused.code());
        }
    }

    /// Any string: a sign-in URL that passes is http(s), printable ASCII.
    #[test]
    fn signin_check_never_panics(url in prop_oneof![".{0,40}".boxed(), "[hH][tT][tT][pP][sS]?://[a-z0-9.:@\\[\\]_-]{0,20}[/?#]?.{0,10}".boxed()]) {
        if let Ok(checked) = check_signin_url(&url) {
            let lower = url.to_ascii_lowercase();
            prop_assert!(lower.starts_with("http://") || lower.starts_with("https://"));
            prop_assert!(url.bytes().all(|b| b.is_ascii_graphic()));
            prop_assert!(!checked.host().is_empty() && !checked.host().contains('@'));
        }
    }

    /// Any dropped list words one line (or nothing for none).
    #[test]
    fn dropped_notice_never_panics(names in proptest::collection::vec(".{0,20}", 0..12), kinds in proptest::collection::vec(0..10u8, 12)) {
        let reasons = [DropReason::NotInCatalog, DropReason::OutsideGraph, DropReason::NotFound, DropReason::OverLimit, DropReason::Unusable];
        let list: Vec<Dropped> = names.iter().zip(&kinds).map(|(n, k)| Dropped {
            item: if k % 2 == 0 { DroppedItem::Skill } else { DroppedItem::File },
            name: n.clone(),
            reason: reasons[usize::from(k / 2)],
        }).collect();
        let notice = dropped_notice(&list);
        prop_assert_eq!(notice.is_some(), !list.is_empty());
        if let Some(notice) = notice {
            prop_assert!(notice.starts_with("Dropped "));
            prop_assert!(!notice.contains(['\n', '\r']));
        }
    }
}

/// `Files` is small enough for any caller to implement.
#[test]
fn files_is_a_small_trait() {
    struct Upper;
    impl Files for Upper {
        fn graph_file(&self, path: &str) -> Option<String> {
            path.starts_with("src/").then(|| path.to_uppercase())
        }
    }
    let w = World::new();
    let facts = Facts {
        files: &Upper,
        ..w.facts(Origin::Page)
    };
    let p = prompt_decision(decide(
        &prompt(None, "x", &[], &["src/a.rs", "lib/b.rs"]),
        &facts,
    ));
    assert_eq!(p.files, strings(&["SRC/A.RS"]));
}

/// Through a real graph: a workspace-relative or absolute path inside the
/// workspace is a graph file (carried as its graph path); a path that
/// climbs out, an ignored or missing file is not.
#[test]
fn graph_files_through_a_real_graph() {
    use orbit_core::controller::GraphFiles;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.rs"), "mod b;\n").unwrap();
    std::fs::write(root.join("src/b.rs"), "").unwrap();
    std::fs::write(root.join(".gitignore"), "secret.rs\n").unwrap();
    std::fs::write(root.join("secret.rs"), "").unwrap();
    let outside = tempfile::NamedTempFile::new().unwrap();
    let graph = orbit_graph::Graph::build(
        root,
        orbit_graph::GraphOptions {
            cache_dir: None,
            ..orbit_graph::GraphOptions::default()
        },
    )
    .unwrap();
    let w = World::new();
    let absolute_b = root.join("src/b.rs").to_str().unwrap().to_owned();
    let outside = outside.path().to_str().unwrap().to_owned();
    let request = prompt(
        None,
        "x",
        &[],
        &[
            "src/a.rs",
            &absolute_b,
            "src/../../x.rs",
            "secret.rs",
            "src/none.rs",
            &outside,
        ],
    );
    let page_files = GraphFiles(&graph);
    let page = Facts {
        files: &page_files,
        ..w.facts(Origin::Page)
    };
    let p = prompt_decision(decide(&request, &page));
    assert_eq!(p.files, strings(&["src/a.rs", "src/b.rs"]));
    let gone: Vec<&str> = p.dropped.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        gone,
        [
            "src/../../x.rs",
            "secret.rs",
            "src/none.rs",
            outside.as_str()
        ]
    );
    // The host may add the outside file, which exists.
    let host_files = HostFiles(&page_files);
    let host = Facts {
        files: &host_files,
        ..w.facts(Origin::Host)
    };
    let p = prompt_decision(decide(&request, &host));
    assert_eq!(
        p.files,
        vec![
            "src/a.rs".to_owned(),
            "src/b.rs".to_owned(),
            outside.clone()
        ]
    );
}

// ------------------------------------------- answers to the agent's requests

fn agent_permission(id: &str) -> orbit_types::PermissionRequest {
    orbit_types::PermissionRequest {
        request_id: id.to_owned(),
        tool_name: "Bash".to_owned(),
        tool_use_id: Some(format!("toolu_{id}")),
        input: json!({ "command": "ls" }),
        suggestions: Vec::new(),
        description: None,
        decision_reason: None,
        blocked_path: None,
        agent_id: None,
    }
}

fn agent_questions(id: &str) -> orbit_types::QuestionRequest {
    orbit_types::QuestionRequest {
        request_id: id.to_owned(),
        tool_use_id: Some(format!("toolu_{id}")),
        questions: vec![orbit_types::Question {
            question: "Which?".to_owned(),
            header: "Pick".to_owned(),
            options: vec![orbit_types::QuestionOption {
                label: "A".to_owned(),
                description: "a".to_owned(),
            }],
            multi_select: false,
        }],
        agent_id: None,
    }
}

/// `orbit ask`'s check: the same rules as the page's card, from what the
/// agent layer holds, without the host making a card.
#[test]
fn answers_are_checked_against_the_agents_own_request() {
    use orbit_core::controller::{AgentRequest, decide_agent_answer};
    let permission = agent_permission("r1");
    let answer = |choice, id: &str| PageRequest::AnswerPermission {
        key: "c1".to_owned(),
        request_id: id.to_owned(),
        choice,
        message: None,
    };
    assert_eq!(
        decide_agent_answer(&answer(PermissionChoice::Allow, "r1"), (&permission).into()),
        Ok(Answer::Allow)
    );
    // No suggestions from the CLI: no "always".
    assert_eq!(
        decide_agent_answer(
            &answer(PermissionChoice::Always, "r1"),
            (&permission).into()
        ),
        Err(Refused::NoAlways)
    );
    assert_eq!(
        decide_agent_answer(&answer(PermissionChoice::Deny, "r1"), (&permission).into()),
        Ok(Answer::Deny {
            message: DEFAULT_DENY_MESSAGE.to_owned()
        })
    );
    assert!(matches!(
        decide_agent_answer(&answer(PermissionChoice::Allow, "r2"), (&permission).into()),
        Err(Refused::NotPending { .. })
    ));
    let questions = agent_questions("q1");
    assert!(matches!(
        decide_agent_answer(
            &answer(PermissionChoice::Allow, "q1"),
            AgentRequest::Questions(&questions)
        ),
        Err(Refused::WrongCard { .. })
    ));
    let pick = |options: &[&str]| PageRequest::AnswerQuestions {
        key: "c1".to_owned(),
        request_id: "q1".to_owned(),
        answers: vec![QuestionAnswer {
            options: strings(options),
            text: None,
        }],
    };
    assert_eq!(
        decide_agent_answer(&pick(&["A"]), (&questions).into()),
        Ok(Answer::Questions(BTreeMap::from([(
            "Which?".to_owned(),
            strings(&["A"])
        )])))
    );
    assert!(matches!(
        decide_agent_answer(&pick(&["B"]), (&questions).into()),
        Err(Refused::BadAnswer(_))
    ));
    // Not an answer at all.
    assert!(matches!(
        decide_agent_answer(&PageRequest::SetModel { model: None }, (&permission).into()),
        Err(Refused::BadAnswer(_))
    ));
}

#[test]
fn a_watched_terminal_session_is_read_only_before_any_other_rule() {
    // Even a watched key the facts list, idle, with a card pending, from
    // the host too.
    let mut w = World::new();
    w.keys.push("w1".to_owned());
    w.cards.insert("w1".to_owned(), permission("req-w", true));
    w.cards.insert("w2".to_owned(), questions("req-wq"));
    let read_only = Err(Refused::ReadOnly {
        key: "w1".to_owned(),
    });
    for request in [
        prompt(Some("w1"), "take over", &[], &[]),
        answer_permission("w1", "req-w", PermissionChoice::Allow, None),
        PageRequest::Stop {
            key: "w1".to_owned(),
        },
    ] {
        assert_eq!(w.page(&request), read_only, "{request:?}");
        assert_eq!(w.host(&request), read_only, "{request:?}");
    }
    for request in [
        answer_questions("w2", "req-wq", vec![opts(&["A"])]),
        PageRequest::SkipQuestions {
            key: "w2".to_owned(),
            request_id: "req-wq".to_owned(),
        },
    ] {
        assert_eq!(code(w.page(&request)), "read_only", "{request:?}");
    }
    // Requests naming no key, and Orbit's own conversations, are not touched.
    assert!(w.page(&PageRequest::StopAll {}).is_ok());
    assert!(w.page(&prompt(Some("c4"), "go on", &[], &[])).is_ok());
    assert!(w.page(&prompt(None, "new", &[], &[])).is_ok());
}
