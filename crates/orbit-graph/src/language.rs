//! Which language a file is, from its name alone.

use orbit_types::Language;

/// The language of a file, from its name (the last `/`-separated component
/// of `path`). Files with no known extension are [`Language::Text`].
pub fn detect_language(path: &str) -> Language {
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = match name.rfind('.') {
        Some(index) if index > 0 => &name[index + 1..],
        _ => return by_name(name),
    };
    match extension.to_ascii_lowercase().as_str() {
        "ts" | "tsx" | "mts" | "cts" => Language::TypeScript,
        "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
        "py" | "pyi" | "pyw" => Language::Python,
        "rs" => Language::Rust,
        "go" => Language::Go,
        "java" => Language::Java,
        "kt" | "kts" => Language::Kotlin,
        "c" | "h" => Language::C,
        "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "tpp" | "inl" => {
            Language::Cpp
        }
        "md" | "markdown" | "mdx" => Language::Markdown,
        "json" | "jsonc" | "json5" => Language::Json,
        "toml" => Language::Toml,
        "yaml" | "yml" => Language::Yaml,
        "html" | "htm" => Language::Html,
        "css" | "scss" | "sass" | "less" => Language::Css,
        "sh" | "bash" | "zsh" => Language::Shell,
        _ => by_name(name),
    }
}

fn by_name(name: &str) -> Language {
    match name {
        "Cargo.lock" | "Pipfile" => Language::Toml,
        _ => Language::Text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects() {
        assert_eq!(detect_language("src/a.tsx"), Language::TypeScript);
        assert_eq!(detect_language("types/a.d.ts"), Language::TypeScript);
        assert_eq!(detect_language("a/b.MJS"), Language::JavaScript);
        assert_eq!(detect_language("x/.gitignore"), Language::Text);
        assert_eq!(detect_language("README"), Language::Text);
        assert_eq!(detect_language("lib/x.hpp"), Language::Cpp);
        assert_eq!(detect_language("docs/x.md"), Language::Markdown);
    }
}
