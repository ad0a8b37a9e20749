//! docket-core's top-level modules form no cycle: a module that uses another never is used by it,
//! directly or through others, so each can be read (and moved) after the ones it uses.
//!
//! The graph is read from the source text: a file under `crates/core/src/<m>/` or `<m>.rs`
//! belongs to module `<m>`, and every `crate::<n>` path (also in `use crate::{a, b}` groups) and
//! every `super::` path that resolves into another top-level module `<n>` is an edge `m -> n`.
//! Comments, string literals and test code (`tests.rs` files and `#[cfg(test)]` modules) do not
//! count: a test may use the in-memory adapters of the module that depends on its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Where an edge was seen first, as `file:line`.
type Edges = BTreeMap<(String, String), String>;

/// The `.rs` files under `dir`, as (path relative to `dir`, text).
fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap_or_else(|e| panic!("{}: {e}", at.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.push((relative, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// The module path of a file: `a.rs` and `a/mod.rs` are `[a]`, `a/b.rs` is `[a, b]`; `lib.rs`
/// is the crate root (`[]`).
fn module_path(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// `text` without comments, string and character literals (each replaced by a space; newlines
/// kept so that line numbers stay right).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let at = |k: usize| chars.get(k).copied();
        match chars[i] {
            '/' if at(i + 1) == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if at(i + 1) == Some('*') => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && at(i + 1) == Some('/')) {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
                i += 2;
                out.push(' ');
                continue;
            }
            // A raw string (r"..." or r#"..."#): no escapes, ends at a quote and as many #.
            'r' if matches!(at(i + 1), Some('"' | '#'))
                && !(i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')) =>
            {
                let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
                if chars.get(i + 1 + hashes) != Some(&'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                let end: String = std::iter::once('"')
                    .chain("#".repeat(hashes).chars())
                    .collect();
                let body = i + 2 + hashes;
                let text: String = chars[body..].iter().collect();
                let len = text
                    .find(&end)
                    .map_or(chars.len() - body, |n| text[..n].chars().count());
                out.extend(chars[body..body + len].iter().filter(|c| **c == '\n'));
                out.push(' ');
                i = body + len + 1 + hashes;
                continue;
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    match chars[i] {
                        '\\' => i += 1,
                        '\n' => out.push('\n'),
                        _ => {}
                    }
                    i += 1;
                }
                out.push(' ');
            }
            // A character literal ('x', '\n', '\''); a lifetime ('a) is left as it is.
            '\'' if at(i + 1) == Some('\\') => {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                out.push(' ');
            }
            '\'' if at(i + 2) == Some('\'') => {
                i += 2;
                out.push(' ');
            }
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// The tokens of code: identifiers, `::`, and single punctuation characters, with their line.
fn tokens(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_alphanumeric() || c == '_' {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push((chars[start..i].iter().collect(), n + 1));
                continue;
            }
            if c == ':' && chars.get(i + 1) == Some(&':') {
                out.push(("::".to_string(), n + 1));
                i += 2;
                continue;
            }
            if !c.is_whitespace() {
                out.push((c.to_string(), n + 1));
            }
            i += 1;
        }
    }
    out
}

/// The first segment of each path of a `{a, b::c, d as e}` group starting at `tokens[open]`
/// (`{`), and the index after the group's `}`.
fn group_heads(tokens: &[(String, usize)], open: usize) -> (Vec<String>, usize) {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut expect_head = true;
    let mut i = open;
    while i < tokens.len() {
        match tokens[i].0.as_str() {
            "{" => {
                depth += 1;
                expect_head = depth == 1;
            }
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return (heads, i + 1);
                }
            }
            "," if depth == 1 => expect_head = true,
            token if expect_head && depth == 1 => {
                heads.push(token.to_string());
                expect_head = false;
            }
            _ => {}
        }
        i += 1;
    }
    (heads, i)
}

/// The edges between the top-level modules of a crate whose `src/` files are `files`.
fn module_edges(files: &[(String, String)]) -> Edges {
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|(file, _)| module_path(file).first().cloned())
        .collect();
    let mut edges = Edges::new();
    for (file, text) in files {
        let path = module_path(file);
        let Some(from) = path.first() else {
            continue; // the crate root declares every module
        };
        if path.iter().any(|m| m == "tests") {
            continue;
        }
        let tokens = tokens(&code_only(text));
        let mut add = |to: &str, line: usize| {
            if to != from && modules.contains(to) {
                let key = (from.clone(), to.to_string());
                edges.entry(key).or_insert_with(|| format!("{file}:{line}"));
            }
        };
        // Inline modules: (name, brace depth inside them, whether test code).
        let mut inline: Vec<(String, usize, bool)> = Vec::new();
        let mut depth = 0;
        let mut cfg_test = false;
        let mut i = 0;
        while i < tokens.len() {
            let (token, line) = (&tokens[i].0, tokens[i].1);
            let next = |n: usize| tokens.get(i + n).map(|t| t.0.as_str());
            match token.as_str() {
                "{" => depth += 1,
                "}" => {
                    if inline.last().is_some_and(|(_, d, _)| *d == depth) {
                        inline.pop();
                    }
                    depth -= 1;
                }
                "#" if next(1) == Some("[")
                    && next(2) == Some("cfg")
                    && next(3) == Some("(")
                    && next(4) == Some("test") =>
                {
                    cfg_test = true;
                }
                "mod" if next(2) == Some("{") => {
                    inline.push((next(1).unwrap().to_string(), depth + 1, cfg_test));
                    cfg_test = false;
                }
                ";" | "fn" | "mod" | "use" | "impl" => cfg_test = false,
                _ => {}
            }
            if inline.iter().any(|(_, _, test)| *test) {
                i += 1;
                continue;
            }
            let mut base: Option<Vec<String>> = None;
            let mut j = i;
            if token == "crate" && next(1) == Some("::") {
                base = Some(Vec::new());
                j = i + 2;
            } else if token == "super"
                && next(1) == Some("::")
                && (i == 0 || tokens[i - 1].0 != "::")
            {
                let mut at: Vec<String> = path.clone();
                at.extend(inline.iter().map(|(name, _, _)| name.clone()));
                while tokens.get(j).is_some_and(|t| t.0 == "super")
                    && tokens.get(j + 1).is_some_and(|t| t.0 == "::")
                {
                    at.pop();
                    j += 2;
                }
                base = Some(at);
            }
            if let Some(base) = base {
                match (base.first(), tokens.get(j)) {
                    (Some(top), _) => add(top, line),
                    (None, Some((open, _))) if open == "{" => {
                        let (heads, after) = group_heads(&tokens, j);
                        for head in heads {
                            add(&head, line);
                        }
                        i = after;
                        continue;
                    }
                    (None, Some((head, _))) => add(head, line),
                    (None, None) => {}
                }
                i = j;
                continue;
            }
            i += 1;
        }
    }
    edges
}

/// A cycle of the graph, as `a -> b -> ... -> a` with where each edge is seen, if there is one.
fn cycle(edges: &Edges) -> Option<String> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    // Depth-first, keeping the path: an edge back into it closes a cycle.
    fn visit<'a>(
        at: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(start) = path.iter().position(|m| *m == at) {
            let mut cycle = path[start..].to_vec();
            cycle.push(at);
            return Some(cycle);
        }
        if !done.insert(at) {
            return None;
        }
        path.push(at);
        for to in next.get(at).into_iter().flatten() {
            if let Some(cycle) = visit(to, next, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for from in next.keys() {
        if let Some(found) = visit(from, &next, &mut Vec::new(), &mut done) {
            let seen: Vec<String> = found
                .windows(2)
                .map(|w| {
                    let at = &edges[&(w[0].to_string(), w[1].to_string())];
                    format!("  {} -> {} ({at})", w[0], w[1])
                })
                .collect();
            return Some(format!("{}\n{}", found.join(" -> "), seen.join("\n")));
        }
    }
    None
}

#[test]
fn the_modules_of_docket_core_form_no_cycle() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../crates/core/src");
    let edges = module_edges(&sources(&src));

    assert!(
        !edges.is_empty(),
        "no module uses another: is the reader broken?"
    );
    if let Some(cycle) = cycle(&edges) {
        panic!("docket-core's modules form a cycle: {cycle}");
    }
}

#[test]
fn the_module_lint_sees_every_kind_of_reference_and_only_code() {
    let files = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect()
    };
    let edges = module_edges(&files(&[
        (
            "lib.rs",
            "pub mod a; pub mod b; pub mod c; pub mod d; pub mod e;",
        ),
        (
            "a.rs",
            "use crate::b::X;\nfn f() -> crate::c::Y { todo!() }",
        ),
        (
            "b/mod.rs",
            "use crate::{d::Z, e as gone, self};\nmod inner;",
        ),
        ("b/inner.rs", "use super::super::c;"),
        (
            "c.rs",
            r##"use super::*; // crate::a in a comment
const S: &str = "crate::a \" crate::a";
const R: &str = r#"crate::a " crate::a \"#;
/* crate::a */"##,
        ),
        (
            "d.rs",
            "mod local { use super::Q; }\n#[cfg(test)]\nmod tests { use crate::a; }",
        ),
        ("d/tests.rs", "use crate::a::Tested;"),
        (
            "e.rs",
            "fn g<'a>(x: &'a str) -> char { let _ = '\"'; crate::d::h(); 'x' }",
        ),
    ]));

    let found: Vec<String> = edges.keys().map(|(f, t)| format!("{f}->{t}")).collect();
    assert_eq!(found, ["a->b", "a->c", "b->c", "b->d", "b->e", "e->d"]);
    assert_eq!(edges[&("b".into(), "c".into())], "b/inner.rs:1");
    assert_eq!(cycle(&edges), None);

    let mut cyclic = edges.clone();
    cyclic.insert(("c".into(), "a".into()), "c.rs:9".into());
    let cycle = cycle(&cyclic).expect("a -> b -> c -> a is a cycle");
    assert!(cycle.starts_with("a -> b -> c -> a\n"), "{cycle}");
    assert!(cycle.contains("  c -> a (c.rs:9)"), "{cycle}");
}
