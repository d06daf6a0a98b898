//! The file pattern of `orbit.graph.files`: `*` (within a folder), `**`
//! (across folders, `**/` also matching no folder), `?` (one character but
//! `/`); a pattern without a wildcard matches paths that contain it.

/// Whether `path` matches `pattern`.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        return path.contains(pattern);
    }
    let pattern: Vec<char> = pattern.chars().collect();
    let path: Vec<char> = path.chars().collect();
    // Memoised on (pattern index, path index): linear in their product.
    let mut memo = vec![None; (pattern.len() + 1) * (path.len() + 1)];
    matches(&pattern, &path, 0, 0, &mut memo)
}

fn matches(p: &[char], s: &[char], i: usize, j: usize, memo: &mut [Option<bool>]) -> bool {
    let key = i * (s.len() + 1) + j;
    if let Some(known) = memo[key] {
        return known;
    }
    let result = if i == p.len() {
        j == s.len()
    } else if p[i] == '*' && p.get(i + 1) == Some(&'*') {
        let after = i + 2;
        // `**/` may match no folder at all.
        (p.get(after) == Some(&'/') && matches(p, s, after + 1, j, memo))
            || matches(p, s, after, j, memo)
            || (j < s.len() && matches(p, s, i, j + 1, memo))
    } else if p[i] == '*' {
        matches(p, s, i + 1, j, memo)
            || (j < s.len() && s[j] != '/' && matches(p, s, i, j + 1, memo))
    } else if j < s.len() && (p[i] == s[j] || (p[i] == '?' && s[j] != '/')) {
        matches(p, s, i + 1, j + 1, memo)
    } else {
        false
    };
    memo[key] = Some(result);
    result
}
