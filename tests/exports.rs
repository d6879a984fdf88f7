//! The built `libamdhip64.so` exports exactly AMD's HIP names, each in the version node AMD
//! defines it in, under AMD's soname: what ld.so checks before a HIP program may start.

use object::read::elf::{ElfFile64, FileHeader};
use object::{Object, ObjectSymbol};
use std::collections::BTreeMap;
use std::path::PathBuf;

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
    let bytes = std::fs::read(built_library()).unwrap();
    let elf = ElfFile64::<object::Endianness>::parse(&*bytes).unwrap();
    let endian = elf.endian();
    // Map each dynamic symbol to its version name through .gnu.version / .gnu.version_d.
    let versions = elf
        .elf_header()
        .sections(endian, &*bytes)
        .unwrap()
        .versions(endian, &*bytes)
        .unwrap()
        .expect("versioned");
    let mut exported = BTreeMap::new();
    for symbol in elf.dynamic_symbols() {
        if symbol.is_undefined() {
            continue;
        }
        let index = versions.version_index(endian, symbol.index());
        let version = versions
            .version(index)
            .ok()
            .flatten()
            .map(|v| String::from_utf8_lossy(v.name()).into_owned())
            .unwrap_or_default();
        exported.insert(symbol.name().unwrap().to_owned(), version);
    }
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
    let bytes = std::fs::read(built_library()).unwrap();
    let elf = ElfFile64::<object::Endianness>::parse(&*bytes).unwrap();
    let endian = elf.endian();
    let sections = elf.elf_header().sections(endian, &*bytes).unwrap();
    let (dynamic, link) = sections
        .dynamic(endian, &*bytes)
        .unwrap()
        .expect("a dynamic section");
    let strings = sections.strings(endian, &*bytes, link).unwrap();
    let soname = dynamic
        .iter()
        .find(|d| d.d_tag.get(endian) == object::elf::DT_SONAME as u64)
        .map(|d| {
            String::from_utf8_lossy(strings.get(d.d_val.get(endian) as u32).unwrap()).into_owned()
        });
    assert_eq!(soname.as_deref(), Some("libamdhip64.so.6"));
}
