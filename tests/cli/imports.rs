//! Inside each crate, no file and no top-level module imports in a circle. The crates' own
//! layers are held by the compiler (layers.rs); within a crate only this test holds them. The
//! graph is read from the code's `crate::` and `super::` paths (`use` trees with braces
//! expanded), comments, string literals and inline `#[cfg(test)]` modules left out; a module
//! naming its own children (`mod` lines, re-exports) is not an edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

type Module = Vec<String>;

/// Every `.rs` file of a crate's `src/` (test-only files aside) as its module path, with its
/// code before any inline test module, comments and string literals blanked.
fn modules(src: &Path) -> BTreeMap<Module, String> {
    let mut files = BTreeMap::new();
    for path in crate::common::files_in(src) {
        let rel = path.strip_prefix(src).unwrap();
        let in_tests = rel
            .parent()
            .is_some_and(|p| p.components().any(|c| c.as_os_str() == "tests"));
        let name = path.file_name().unwrap().to_string_lossy();
        if in_tests || !name.ends_with(".rs") || name == "tests.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        files.insert(module_path(src, &path), code_of(&text));
    }
    files
}

fn module_path(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The code a file runs outside its tests: cut at the first `#[cfg(test)]` line, line comments
/// and string literals blanked, so that a path in a doc comment or a message is no import.
fn code_of(text: &str) -> String {
    let cut = Regex::new(r"(?m)^\s*#\[cfg\(test\)\]").unwrap();
    let text = cut.find(text).map_or(text, |m| &text[..m.start()]);
    let comments = Regex::new(r"//[^\n]*").unwrap();
    let strings = Regex::new(r#""(?:\\.|[^"\\])*""#).unwrap();
    strings
        .replace_all(&comments.replace_all(text, ""), "\"\"")
        .into_owned()
}

/// `a::{b, c::{d as e, f}}` as `a::b`, `a::c::d`, `a::c::f`.
fn expand(tree: &str) -> Vec<String> {
    let renames = Regex::new(r"\s+as\s+\w+").unwrap();
    let tree: String = renames
        .replace_all(tree, "")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let (head, inner) = (&tree[..open], &tree[open + 1..tree.rfind('}').unwrap()]);
    let mut parts = Vec::new();
    let (mut depth, mut current) = (0, String::new());
    for ch in inner.chars() {
        match ch {
            ',' if depth == 0 => parts.push(std::mem::take(&mut current)),
            '{' => {
                depth += 1;
                current.push(ch);
            }
            '}' => {
                depth -= 1;
                current.push(ch);
            }
            _ => current.push(ch),
        }
    }
    parts.push(current);
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |q| format!("{head}{q}")))
        .collect()
}

/// Every `crate::` and `super::` path a file's code names.
fn paths(code: &str) -> Vec<String> {
    let uses = Regex::new(r"\buse\s+((?:crate|super)::[^;]*);").unwrap();
    let any_use = Regex::new(r"\buse\s+[^;]*;").unwrap();
    let inline = Regex::new(r"\b((?:crate|super)(?:::\w+)+)").unwrap();
    let tail = Regex::new(r"::(self|\*)$").unwrap();
    let mut found: Vec<String> = uses
        .captures_iter(code)
        .flat_map(|c| expand(&c[1]))
        .map(|p| tail.replace(&p, "").into_owned())
        .collect();
    let rest = any_use.replace_all(code, "");
    found.extend(inline.captures_iter(&rest).map(|c| c[1].to_owned()));
    found
}

/// Each module and the modules of its crate it names (the longest existing prefix of a path).
fn edges(files: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let resolve = |segs: &[String]| {
        (1..=segs.len())
            .rev()
            .map(|k| segs[..k].to_vec())
            .find(|m| files.contains_key(m))
    };
    let mut out = BTreeMap::new();
    for (module, code) in files {
        let mut targets = BTreeSet::new();
        for path in paths(code) {
            let segs: Vec<String> = path
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            let target: Module = if segs[0] == "crate" {
                segs[1..].to_vec()
            } else {
                let mut base = module.clone();
                let mut rest = &segs[..];
                while rest.first().is_some_and(|s| s == "super") {
                    rest = &rest[1..];
                    base.pop();
                }
                base.extend(rest.iter().cloned());
                base
            };
            if let Some(found) = resolve(&target) {
                let own_child = found.len() > module.len() && found.starts_with(module);
                if found != *module && !own_child {
                    targets.insert(found);
                }
            }
        }
        out.insert(module.clone(), targets);
    }
    out
}

/// The strongly connected parts of more than one node (Tarjan's algorithm): each is a cycle.
fn cycles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        graph: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        found: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut part = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                part.push(w.clone());
                if w == v {
                    break;
                }
            }
            if part.len() > 1 {
                part.sort();
                s.found.push(part);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.found
}

/// The same graph between the crate's top-level modules (a folder and its files as one).
fn top_level(graph: &BTreeMap<Module, BTreeSet<Module>>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut out: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, targets) in graph {
        let a: Module = from.iter().take(1).cloned().collect();
        out.entry(a.clone()).or_default();
        for to in targets {
            let b: Module = to.iter().take(1).cloned().collect();
            if a != b && !a.is_empty() && !b.is_empty() {
                out.get_mut(&a).unwrap().insert(b);
            }
        }
    }
    out
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "lib".to_owned()
    } else {
        m.join("/")
    }
}

fn crate_sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("src")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    dirs.extend(crates);
    dirs
}

fn describe(parts: &[Vec<Module>], graph: &BTreeMap<Module, BTreeSet<Module>>) -> String {
    parts
        .iter()
        .map(|part| {
            part.iter()
                .map(|m| {
                    let into: Vec<String> = graph[m]
                        .iter()
                        .filter(|t| part.contains(t))
                        .map(name)
                        .collect();
                    format!("{} -> {}", name(m), into.join(", "))
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .collect::<Vec<_>>()
        .join("\n  ")
}

#[test]
fn no_import_cycles_within_a_crate() {
    let mut found = Vec::new();
    for src in crate_sources() {
        let files = modules(&src);
        assert!(files.len() > 1, "{}: no files read", src.display());
        let graph = edges(&files);
        let by_file = cycles(&graph);
        if !by_file.is_empty() {
            found.push(format!(
                "{} (files):\n  {}",
                src.display(),
                describe(&by_file, &graph)
            ));
        }
        let folders = top_level(&graph);
        let by_folder = cycles(&folders);
        if !by_folder.is_empty() {
            found.push(format!(
                "{} (top-level modules):\n  {}",
                src.display(),
                describe(&by_folder, &folders)
            ));
        }
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

/// The reader finds a cycle where there is one, and none where a parent names its child.
#[test]
fn the_reader_sees_a_cycle_and_not_a_parent_naming_its_child() {
    let dir = assert_fs::TempDir::new().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\n// use crate::c; in a comment\n",
    )
    .unwrap();
    std::fs::write(
        src.join("a/mod.rs"),
        "mod inner;\npub use inner::X;\nuse crate::b::{self, Y as Z};\n",
    )
    .unwrap();
    std::fs::write(
        src.join("a/inner.rs"),
        "pub struct X;\nfn f() { super::super::c::g(); }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("b.rs"),
        "pub struct Y;\nconst S: &str = \"crate::a\";\n",
    )
    .unwrap();
    std::fs::write(src.join("c.rs"), "pub fn g() {}\n").unwrap();

    let files = modules(src);
    let graph = edges(&files);
    assert!(cycles(&graph).is_empty(), "{graph:?}");
    assert_eq!(
        graph[&vec!["a".to_owned()]],
        BTreeSet::from([vec!["b".to_owned()]])
    );

    // b now really uses a, and c uses a's child: a circle of files and of folders.
    std::fs::write(src.join("b.rs"), "use crate::a::X;\npub struct Y;\n").unwrap();
    std::fs::write(src.join("c.rs"), "pub fn g() { crate::a::inner::X; }\n").unwrap();
    let graph = edges(&modules(src));
    let found = cycles(&graph);
    let a = || vec!["a".to_owned()];
    assert_eq!(
        found.iter().cloned().collect::<BTreeSet<_>>(),
        BTreeSet::from([
            vec![a(), vec!["b".to_owned()]],
            vec![
                vec!["a".to_owned(), "inner".to_owned()],
                vec!["c".to_owned()]
            ],
        ]),
    );
    let folders = cycles(&top_level(&graph));
    assert_eq!(
        folders,
        vec![vec![a(), vec!["b".to_owned()], vec!["c".to_owned()]]]
    );
}
