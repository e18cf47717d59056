use super::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[test]
fn booleans_take_the_usual_spellings_in_any_case() {
    for v in ["1", "true", "TRUE", "on", "On", "yes", "YES", " on "] {
        assert!(parse_bool("PACC_FMA", v, "x").unwrap(), "{v}");
    }
    for v in ["0", "false", "False", "off", "OFF", "no", "No"] {
        assert!(!parse_bool("PACC_FMA", v, "x").unwrap(), "{v}");
    }
    for v in ["", "2", "maybe", "enable", "y"] {
        match parse_bool("PACC_FMA", v, "contract multiply-adds") {
            Err(Error::Env(EnvError::NotBoolean { var, value, on })) => {
                assert_eq!((var.as_str(), value.as_str()), ("PACC_FMA", v));
                assert_eq!(on, "contract multiply-adds");
            }
            other => panic!("{v}: {other:?}"),
        }
    }
    let e = parse_bool("PACC_RING", "maybe", "keep the ring").unwrap_err();
    let m = e.to_string();
    assert!(m.starts_with("PACC_RING=maybe is not a boolean"), "{m}");
    assert!(m.contains("keep the ring") && m.contains("Hint:"), "{m}");
}

#[test]
fn unknown_names_are_the_pacc_ones_on_no_list() {
    let names = [
        "PACC_TYPO_CHUNKS",
        "PACC_CHUNKS",
        "HOME",
        "PACC_TEST_BACKEND",
        "PACC_A",
    ];
    let u = unknown(names.map(OsString::from));
    assert_eq!(u, ["PACC_A", "PACC_TYPO_CHUNKS"]);
    let w = warning(&u).unwrap();
    assert!(
        w.starts_with("pacc: warning: PACC_A and PACC_TYPO_CHUNKS are set but not a variable"),
        "{w}"
    );
    for v in VARIABLES {
        assert!(w.contains(v), "{w}");
    }
    let w = warning(&u[1..]).unwrap();
    assert!(w.contains("PACC_TYPO_CHUNKS is set"), "{w}");
    assert_eq!(warning(&[]), None);
    assert!(unknown(VARIABLES.iter().map(OsString::from)).is_empty());
}

#[test]
fn path_variables_refuse_the_empty_value() {
    match non_empty("PACC_RESUME", Some("".into()), "the checkpoint directory") {
        Err(Error::Env(EnvError::Empty { var, what })) => {
            assert_eq!(var, "PACC_RESUME");
            assert_eq!(what, "the checkpoint directory");
        }
        other => panic!("{other:?}"),
    }
    let e = non_empty("PACC_RESUME", Some("".into()), "the directory").unwrap_err();
    assert!(
        e.to_string().starts_with("PACC_RESUME is set but empty"),
        "{e}"
    );
    assert_eq!(
        non_empty("V", Some("d".into()), "x").unwrap(),
        Some("d".into())
    );
    assert_eq!(non_empty("V", None, "x").unwrap(), None);
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The `PACC_` names in `text` passed as a string literal to a call of one of `readers` (or,
/// with `consts`, bound to a `&str` constant), by the text before the literal.
fn read_names(text: &str, readers: &[&str], consts: bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in text.match_indices("\"PACC_") {
        let name: String = text[at + 1..]
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        let before = text[..at].trim_end();
        let call = before.strip_suffix('(').is_some_and(|b| {
            readers.iter().any(|r| {
                b.ends_with(r)
                    && !b[..b.len() - r.len()].ends_with(|c: char| c.is_alphanumeric() || c == '_')
            })
        });
        if call || (consts && before.ends_with("&str =")) {
            out.insert(name);
        }
    }
    out
}

/// The library reads exactly the variables of [`VARIABLES`], all through this module.
#[test]
fn the_list_holds_every_variable_the_library_reads() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut read = BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        if !f.ends_with("env.rs") && !f.ends_with("env/tests.rs") {
            for direct in [
                "std::env::var(\"PACC_",
                "std::env::var_os(\"PACC_",
                "std::env::var(format!(\"PACC_",
                "std::env::var_os(format!(\"PACC_",
            ] {
                assert!(
                    !text.replace([' ', '\n'], "").contains(direct),
                    "{}: reads a PACC_ variable around crate::env",
                    f.display()
                );
            }
        }
        read.extend(read_names(
            &text,
            &["var", "var_os", "flag", "path", "env_usize"],
            false,
        ));
    }
    let listed: BTreeSet<String> = VARIABLES.iter().map(|v| v.to_string()).collect();
    assert_eq!(
        read, listed,
        "the variables read (left) and env::VARIABLES (right)"
    );
}

/// The tests, benchmarks and examples read only listed variables, and each tool variable is
/// read somewhere.
#[test]
fn the_tool_list_holds_every_variable_the_tests_read() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for d in [
        "tests",
        "benches",
        "examples",
        "pacc-runtime/tests",
        "pacc-translate/tests",
    ] {
        sources(&root.join(d), &mut files);
    }
    let mut read = BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        read.extend(read_names(&text, &["var", "var_os", "env"], true));
    }
    let tools: BTreeSet<String> = TOOL_VARIABLES.iter().map(|v| v.to_string()).collect();
    // Set on purpose by the test of the warning about unknown variables (tests/robust.rs).
    let unknown_on_purpose = ["PACC_TYPO_CHUNKS"];
    let stray: Vec<_> = read
        .iter()
        .filter(|n| !VARIABLES.contains(&n.as_str()) && !tools.contains(*n))
        .filter(|n| !unknown_on_purpose.contains(&n.as_str()))
        .collect();
    assert!(stray.is_empty(), "read but on no list: {stray:?}");
    let unread: Vec<_> = tools.difference(&read).collect();
    assert!(unread.is_empty(), "listed but read nowhere: {unread:?}");
}
