//! Skills on disk: project, user and plugin folders, names from SKILL.md.

use std::path::Path;

use orbit_agent::skills_on_disk;
use orbit_types::SkillScope;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn project_user_and_plugin_skills() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let config = tmp.path().join("claude");
    write(
        &ws.join(".claude/skills/review/SKILL.md"),
        "---\nname: code-review\ndescription: Review a diff\n---\nbody",
    );
    write(
        &ws.join(".claude/skills/plain/SKILL.md"),
        "# no frontmatter",
    );
    write(&ws.join(".claude/skills/not-a-skill/README.md"), "x");
    write(
        &config.join("skills/code-review/SKILL.md"),
        "---\nname: code-review\n---\nshadowed by the project's",
    );
    write(
        &config.join("skills/deploy/SKILL.md"),
        "---\nname: has space\n---\nfalls back to the folder name",
    );
    let plugin_root = tmp.path().join("plugin-install");
    write(
        &plugin_root.join("skills/lint/SKILL.md"),
        "---\ndescription: Lint it\n---\n",
    );
    write(
        &config.join("plugins/installed_plugins.json"),
        &format!(
            r#"{{"version":2,"plugins":{{"tools@market":[{{"installPath":"{}"}}]}}}}"#,
            plugin_root.display()
        ),
    );

    let skills = skills_on_disk(&ws, &config);
    let names: Vec<(&str, SkillScope)> =
        skills.iter().map(|s| (s.name.as_str(), s.scope)).collect();
    assert_eq!(
        names,
        [
            ("code-review", SkillScope::Project),
            ("plain", SkillScope::Project),
            ("deploy", SkillScope::User),
            ("tools:lint", SkillScope::Plugin),
        ]
    );
    assert_eq!(skills[0].description.as_deref(), Some("Review a diff"));
    assert_eq!(skills[3].plugin.as_deref(), Some("tools"));
    assert!(skills[0].path.ends_with(".claude/skills/review/SKILL.md"));
}

#[test]
fn nothing_on_disk_is_no_skills() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        &tmp.path().join("claude/plugins/installed_plugins.json"),
        "not json",
    );
    assert!(skills_on_disk(tmp.path(), &tmp.path().join("claude")).is_empty());
}
