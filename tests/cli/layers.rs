//! The workspace's layers: each crate depends only on the crates below it, and on no crate it
//! does not use. The compiler then holds the rest: a crate cannot name one it does not depend
//! on, so an import up or across the pipeline fails to build. Read from `cargo metadata`, as
//! cargo itself resolves the manifests.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The crates bottom up (docs/architecture.md draws them). A new crate takes its place here.
const LAYERS: &[&str] = &[
    "nsys-gate-core",
    "nsys-gate-analyze",
    "nsys-gate-compare",
    "nsys-gate-render",
    "nsys-gate-forge",
    "nsys-gate",
];

/// One dependency of a workspace crate, as `cargo metadata` lists it.
struct Dependency {
    from: String,
    to: String,
    dev: bool,
}

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(&cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("{cargo} metadata: {e}"));
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every dependency of every workspace member, with the member's folder.
fn dependencies(metadata: &Value) -> (Vec<(String, PathBuf)>, Vec<Dependency>) {
    let mut members = Vec::new();
    let mut deps = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap().to_owned();
        let manifest = Path::new(package["manifest_path"].as_str().unwrap());
        members.push((name.clone(), manifest.parent().unwrap().to_path_buf()));
        for dep in package["dependencies"].as_array().unwrap() {
            deps.push(Dependency {
                from: name.clone(),
                to: dep["name"].as_str().unwrap().to_owned(),
                dev: dep["kind"].as_str() == Some("dev"),
            });
        }
    }
    (members, deps)
}

/// What breaks the layering: a member without a layer, a dependency on a crate of the same
/// layer or above (dev-dependencies too: a test may reach down, never up).
fn violations(members: &[String], deps: &[Dependency]) -> Vec<String> {
    let layer = |name: &str| LAYERS.iter().position(|l| *l == name);
    let mut found = Vec::new();
    for member in members {
        if layer(member).is_none() {
            found.push(format!("{member} has no place in LAYERS"));
        }
    }
    for dep in deps {
        if let (Some(from), Some(to)) = (layer(&dep.from), layer(&dep.to)) {
            if to >= from {
                found.push(format!(
                    "{} depends on {}, a layer {}",
                    dep.from,
                    dep.to,
                    if to == from { "beside it" } else { "above it" }
                ));
            }
        }
    }
    found
}

#[test]
fn each_crate_depends_only_on_crates_below_it() {
    let (members, deps) = dependencies(&metadata());
    let names: Vec<String> = members.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(names.len(), LAYERS.len(), "workspace members: {names:?}");
    let found = violations(&names, &deps);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_check_finds_a_dependency_up_or_across_and_a_crate_without_a_layer() {
    let dep = |from: &str, to: &str| Dependency {
        from: from.to_owned(),
        to: to.to_owned(),
        dev: false,
    };
    let members = ["nsys-gate-core".to_owned(), "nsys-gate-plugins".to_owned()];
    let found = violations(
        &members,
        &[
            dep("nsys-gate-core", "nsys-gate-render"),
            dep("nsys-gate-compare", "nsys-gate-compare"),
            dep("nsys-gate-forge", "nsys-gate-core"),
            dep("nsys-gate-render", "serde"),
        ],
    );
    assert_eq!(
        found,
        [
            "nsys-gate-plugins has no place in LAYERS",
            "nsys-gate-core depends on nsys-gate-render, a layer above it",
            "nsys-gate-compare depends on nsys-gate-compare, a layer beside it",
        ]
    );
}

/// The Rust files under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(path) = todo.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                todo.push(entry.unwrap().path());
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// Whether `text` names the crate `ident` in code (a path or a `use`).
fn names_crate(text: &str, ident: &str) -> bool {
    text.lines()
        .map(str::trim_start)
        .filter(|line| !line.starts_with("//"))
        .any(|line| {
            line.match_indices(ident).any(|(at, _)| {
                let before = line[..at].chars().next_back();
                let after = &line[at + ident.len()..];
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
                    && (after.starts_with("::")
                        || after.starts_with(';')
                        || after.starts_with(" as"))
            })
        })
}

/// Each crate's dependencies are the ones it uses: every one is named in its code (its tests
/// and benches for a dev-dependency). `serde`'s derives count as naming it.
#[test]
fn each_crate_uses_every_crate_it_depends_on() {
    let (members, deps) = dependencies(&metadata());
    let mut unused = Vec::new();
    for (name, dir) in &members {
        let code = rust_files(&dir.join("src"));
        let mut test_code = code.clone();
        if name == "nsys-gate" {
            // The root's folder holds the other crates: its own code is src/, tests/, benches/.
            test_code.extend(rust_files(&dir.join("tests")));
            test_code.extend(rust_files(&dir.join("benches")));
        }
        let read = |files: &[PathBuf]| -> String {
            files
                .iter()
                .map(|f| std::fs::read_to_string(f).unwrap())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let (text, tests) = (read(&code), read(&test_code));
        for dep in deps.iter().filter(|d| &d.from == name) {
            let ident = dep.to.replace('-', "_");
            let haystack = if dep.dev { &tests } else { &text };
            let used = names_crate(haystack, &ident)
                || (ident == "serde"
                    && haystack.contains("#[derive(")
                    && haystack.contains("Serialize"));
            if !used {
                unused.push(format!("{name} depends on {} and never names it", dep.to));
            }
        }
    }
    assert!(unused.is_empty(), "{}", unused.join("\n"));
}

#[test]
fn a_crate_is_named_in_code_not_in_comments_or_other_words() {
    assert!(names_crate("use regex::Regex;", "regex"));
    assert!(names_crate("    let r = regex::Regex::new(x);", "regex"));
    assert!(names_crate(
        "use nsys_gate_forge as forge;",
        "nsys_gate_forge"
    ));
    assert!(!names_crate("// regex::Regex in a comment", "regex"));
    assert!(!names_crate("let my_regex = 1;", "regex"));
    assert!(!names_crate("use fancy_regex::Regex;", "regex"));
}
