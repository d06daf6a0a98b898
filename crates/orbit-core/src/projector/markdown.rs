//! Claude's reply text as a markdown node tree (pulldown-cmark): no HTML
//! passes (inline and block HTML arrive as text), and a link without a
//! scheme that names a graph file carries that file.

use orbit_types::MdNode;
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use super::GraphView;

/// Parses `text` into blocks. `graph` resolves scheme-less links.
pub(crate) fn render(text: &str, graph: &dyn GraphView) -> Vec<MdNode> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_GFM;
    let mut builder = Builder {
        stack: vec![Frame::root()],
        graph,
    };
    for event in Parser::new_ext(text, options) {
        builder.event(event);
    }
    // Unbalanced input cannot happen with pulldown-cmark, but close
    // whatever is open rather than lose it.
    while builder.stack.len() > 1 {
        builder.close();
    }
    builder.stack.pop().map(|f| f.children).unwrap_or_default()
}

enum Open {
    Root,
    Paragraph,
    Heading(u8),
    Quote,
    CodeBlock(Option<String>),
    List(Option<u64>),
    Item,
    Emphasis,
    Strong,
    Strike,
    Link {
        href: String,
    },
    Table,
    Row,
    Cell,
    /// A tag Orbit shows only the content of (footnotes, metadata, ...).
    Transparent,
}

struct Frame {
    open: Open,
    children: Vec<MdNode>,
    /// Table rows, for `Open::Table`; cells, for `Open::Row`.
    rows: Vec<Vec<Vec<MdNode>>>,
    checked: Option<bool>,
    code: String,
}

impl Frame {
    fn root() -> Self {
        Self::new(Open::Root)
    }

    fn new(open: Open) -> Self {
        Self {
            open,
            children: Vec::new(),
            rows: Vec::new(),
            checked: None,
            code: String::new(),
        }
    }
}

struct Builder<'g> {
    stack: Vec<Frame>,
    graph: &'g dyn GraphView,
}

impl Builder<'_> {
    fn push(&mut self, node: MdNode) {
        if let Some(top) = self.stack.last_mut() {
            if let Open::CodeBlock(_) = top.open {
                if let MdNode::Text { text } = node {
                    top.code.push_str(&text);
                }
                return;
            }
            // Adjacent text merges (pulldown-cmark splits at entities).
            if let (Some(MdNode::Text { text: last }), MdNode::Text { text }) =
                (top.children.last_mut(), &node)
            {
                last.push_str(text);
                return;
            }
            top.children.push(node);
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(end) => {
                if !matches!(end, TagEnd::HtmlBlock) {
                    self.close();
                }
            }
            Event::Text(text)
            | Event::Html(text)
            | Event::InlineHtml(text)
            | Event::InlineMath(text)
            | Event::DisplayMath(text) => self.push(MdNode::Text {
                text: text.into_string(),
            }),
            Event::Code(text) => self.push(MdNode::Code {
                text: text.into_string(),
            }),
            Event::FootnoteReference(label) => self.push(MdNode::Text {
                text: format!("[^{label}]"),
            }),
            Event::SoftBreak => self.push(MdNode::SoftBreak {}),
            Event::HardBreak => self.push(MdNode::HardBreak {}),
            Event::Rule => self.push(MdNode::Rule {}),
            Event::TaskListMarker(checked) => {
                if let Some(item) = self
                    .stack
                    .iter_mut()
                    .rev()
                    .find(|f| matches!(f.open, Open::Item))
                {
                    item.checked = Some(checked);
                }
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let open = match tag {
            Tag::Paragraph => Open::Paragraph,
            Tag::Heading { level, .. } => Open::Heading(level as u8),
            Tag::BlockQuote(_) => Open::Quote,
            Tag::CodeBlock(kind) => Open::CodeBlock(match kind {
                CodeBlockKind::Fenced(info) => info
                    .split_whitespace()
                    .next()
                    .map(str::to_owned)
                    .filter(|s| !s.is_empty()),
                CodeBlockKind::Indented => None,
            }),
            // HTML blocks: their text arrives as `Event::Html`, shown as
            // text inside the current frame; there is nothing to open.
            Tag::HtmlBlock => return,
            Tag::List(start) => Open::List(start),
            Tag::Item => Open::Item,
            Tag::Emphasis => Open::Emphasis,
            Tag::Strong => Open::Strong,
            Tag::Strikethrough => Open::Strike,
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => Open::Link {
                href: dest_url.into_string(),
            },
            Tag::Table(_) => Open::Table,
            Tag::TableHead | Tag::TableRow => Open::Row,
            Tag::TableCell => Open::Cell,
            _ => Open::Transparent,
        };
        self.stack.push(Frame::new(open));
    }

    fn close(&mut self) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        let children = frame.children;
        let node = match frame.open {
            Open::Root => {
                self.stack.push(Frame {
                    children,
                    ..Frame::root()
                });
                return;
            }
            Open::Paragraph => MdNode::Paragraph { children },
            Open::Heading(level) => MdNode::Heading { level, children },
            Open::Quote => MdNode::Quote { children },
            Open::CodeBlock(lang) => MdNode::CodeBlock {
                lang,
                text: frame.code,
            },
            Open::List(start) => MdNode::List { start, children },
            Open::Item => MdNode::Item {
                checked: frame.checked,
                children,
            },
            Open::Emphasis => MdNode::Emphasis { children },
            Open::Strong => MdNode::Strong { children },
            Open::Strike => MdNode::Strike { children },
            Open::Link { href } => {
                let (file, external) = link_target(&href, self.graph);
                MdNode::Link {
                    href,
                    file,
                    external,
                    children,
                }
            }
            Open::Table => MdNode::Table { rows: frame.rows },
            Open::Row => {
                if let Some(table) = self.stack.last_mut() {
                    table.rows.push(frame.rows.into_iter().flatten().collect());
                }
                return;
            }
            Open::Cell => {
                if let Some(row) = self.stack.last_mut() {
                    row.rows.push(vec![children]);
                }
                return;
            }
            Open::Transparent => {
                for child in children {
                    self.push(child);
                }
                return;
            }
        };
        self.push(node);
    }
}

/// The workspace file a link opens (a link without a scheme naming a graph
/// file, after dropping `#fragment`, `?query` and a `:line` suffix), and
/// whether its `href` may be opened as a web address.
fn link_target(href: &str, graph: &dyn GraphView) -> (Option<String>, bool) {
    if let Some(scheme) = scheme(href) {
        let external = matches!(
            scheme.to_ascii_lowercase().as_str(),
            "http" | "https" | "mailto"
        );
        return (None, external);
    }
    let path = href.split(['#', '?']).next().unwrap_or_default();
    if path.is_empty() || href.starts_with("//") {
        return (None, false);
    }
    let path = orbit_common::percent_decode_lossy(path);
    let file = graph.resolve(&path).or_else(|| {
        // `src/a.rs:12` or `src/a.rs:12:3`.
        let mut trimmed = path.as_str();
        while let Some((head, tail)) = trimmed.rsplit_once(':') {
            if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) {
                break;
            }
            trimmed = head;
        }
        (trimmed != path).then(|| graph.resolve(trimmed)).flatten()
    });
    (file, false)
}

/// A URL's scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`,
/// before the first `:`), if it has one. A Windows drive letter is no scheme.
fn scheme(href: &str) -> Option<&str> {
    let (scheme, _) = href.split_once(':')?;
    let mut bytes = scheme.bytes();
    let first = bytes.next()?;
    (first.is_ascii_alphabetic()
        && scheme.len() > 1
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))
    .then_some(scheme)
}

#[cfg(test)]
mod tests {
    use super::scheme;

    #[test]
    fn schemes() {
        assert_eq!(scheme("https://x"), Some("https"));
        assert_eq!(scheme("mailto:a@b"), Some("mailto"));
        assert_eq!(scheme("javascript:alert(1)"), Some("javascript"));
        assert_eq!(scheme("src/a.rs"), None);
        assert_eq!(scheme("src/a.rs:12"), None);
        assert_eq!(scheme("C:/x"), None);
    }
}
