//! What `--help` says, for the tool and each subcommand: a change to an option's words or
//! default shows here as a snapshot to accept on purpose (the README quotes these).

use std::process::Command;

/// The help of `args` (`--help` appended), as printed.
fn help(args: &[&str]) -> String {
    let out = Command::new(assert_cmd::cargo::cargo_bin("nsys-gate"))
        .args(args)
        .arg("--help")
        // No variable of this machine in the help (clap shows an option's variable's value).
        .env_clear()
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_subcommand_has_its_help_snapshot() {
    insta::assert_snapshot!("help", help(&[]));
    for sub in ["analyze", "report", "run", "post", "compare"] {
        let text = help(&[sub]);
        assert!(text.contains(&format!("Usage: nsys-gate {sub}")), "{text}");
        insta::assert_snapshot!(format!("help_{sub}"), text);
    }
}

/// Every subcommand the tool lists has a snapshot above.
#[test]
fn the_snapshots_cover_every_subcommand_listed() {
    let top = help(&[]);
    let listed: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert_eq!(
        listed,
        ["analyze", "report", "run", "post", "compare"],
        "{top}"
    );
}
