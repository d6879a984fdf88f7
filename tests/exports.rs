//! The built `libamdhip64.so` exports exactly AMD's HIP names, each in the version node AMD
//! defines it in, under AMD's soname: what ld.so checks before a HIP program may start.

use std::collections::BTreeMap;
use std::path::PathBuf;
use symver_build::inspect;

fn built_library() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("target/<profile>/deps");
    // `cargo test` leaves the cdylib in deps/; `cargo build` also copies it one level up.
    [
        deps.to_path_buf(),
        deps.parent().expect("target/<profile>").to_path_buf(),
    ]
    .into_iter()
    .map(|dir| dir.join("libamdhip64.so"))
    .find(|lib| lib.exists())
    .expect("libamdhip64.so is missing: build with `cargo test --workspace`")
}

fn amd_list() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/abi/hip_exports.txt"))
        .unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?.to_owned(), w.next()?.to_owned()))
        })
        .map(|(node, name)| (name, node))
        .collect()
}

#[test]
fn every_amd_export_is_defined_with_amds_version_node() {
    let exported = inspect::exported_versions(&built_library());
    let expected = amd_list();
    assert!(expected.len() > 500, "the AMD list looks truncated");
    for (name, node) in &expected {
        assert_eq!(
            exported.get(name),
            Some(node),
            "{name} must be exported as {name}@@{node}"
        );
    }
    let extra: Vec<_> = exported
        .keys()
        .filter(|n| !expected.contains_key(*n))
        .collect();
    assert!(extra.is_empty(), "exports that are not HIP API: {extra:?}");
}

#[test]
fn soname_is_amds() {
    assert_eq!(
        inspect::soname(&built_library()).as_deref(),
        Some("libamdhip64.so.6")
    );
}
