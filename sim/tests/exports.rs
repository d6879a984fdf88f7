//! The built `libhsasim.so` can stand in for ROCr's `libhsa-runtime64.so.1`: every `hsa_*`
//! export is bound to ROCr's version node `ROCR_1` (clients import `NAME@ROCR_1`), every
//! name ROCr 5.2 exports is defined, every `hsa_*` export is declared in `hsa_abi::fns` (whose
//! signatures `tests/abi_signatures.rs` checks), and the soname is ROCr's.
mod common;

use std::collections::{BTreeMap, BTreeSet};
use symver_build::inspect;

/// Dynamic symbols defined by the library, with their version names.
fn exported() -> BTreeMap<String, String> {
    inspect::exported_versions(&common::built_library())
}

#[test]
fn every_exported_hsa_function_carries_rocr_1() {
    let exports = exported();
    let hsa: Vec<_> = exports
        .iter()
        .filter(|(n, _)| n.starts_with("hsa_"))
        .collect();
    assert!(hsa.len() > 200, "only {} hsa_* exports", hsa.len());
    let wrong: Vec<_> = hsa.iter().filter(|(_, v)| *v != "ROCR_1").collect();
    assert!(
        wrong.is_empty(),
        "exports without @@ROCR_1 (add the file's include! of its symver_*.rs, or \
         crate::api::rocr_symver! in the macro that generates them): {wrong:?}"
    );
}

/// `hsa_abi::fns` declares every export, so a new one cannot skip its signature check
/// (`tests/abi_signatures.rs`); and the library exports every declared function.
#[test]
fn every_exported_hsa_function_is_declared() {
    let exports = exported();
    let exported: BTreeSet<&str> = exports
        .keys()
        .map(String::as_str)
        .filter(|n| n.starts_with("hsa_"))
        .collect();
    let declared: BTreeSet<&str> = hsa_abi::fns::ENTRY_POINTS.iter().map(|e| e.name).collect();
    let undeclared: Vec<_> = exported.difference(&declared).collect();
    assert!(
        undeclared.is_empty(),
        "exports hsa-abi does not declare (add each to hsa_abi::hsa_entry_points!, \
         runtime_only unless hipshim calls it): {undeclared:?}"
    );
    let unexported: Vec<_> = declared.difference(&exported).collect();
    assert!(
        unexported.is_empty(),
        "declared in hsa-abi but not exported: {unexported:?}"
    );
}

#[test]
fn every_rocr_5_2_export_is_defined() {
    let exports = exported();
    let list = include_str!("data/rocr_5_2_exports.txt");
    let missing: Vec<_> = list
        .lines()
        .map(str::trim)
        .filter(|n| !n.is_empty() && !exports.contains_key(*n))
        .collect();
    assert!(missing.is_empty(), "ROCr 5.2 exports we lack: {missing:?}");
}

#[test]
fn soname_is_rocrs() {
    assert_eq!(
        inspect::soname(&common::built_library()).as_deref(),
        Some("libhsa-runtime64.so.1")
    );
}

/// AMD's `libamdhip64.so.5` (ROCm 5.2) imports 76 `hsa_*` functions: all are exported, and
/// all but the ones hsasim documents as not modelled (images and samplers, IPC, graphics
/// interop) are implemented.
#[test]
fn every_libamdhip64_import_is_exported_and_the_unmodelled_ones_are_documented() {
    let exports = exported();
    let imports: Vec<&str> = include_str!("data/libamdhip64_5_hsa_imports.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(imports.len(), 76);
    for name in &imports {
        assert_eq!(
            exports.get(*name).map(String::as_str),
            Some("ROCR_1"),
            "{name}"
        );
    }
    let unsupported: Vec<&str> = imports
        .iter()
        .copied()
        .filter(|n| hsasim::api::unsupported::UNSUPPORTED.contains(n))
        .collect();
    let documented = [
        "hsa_amd_image_create",
        "hsa_amd_interop_map_buffer",
        "hsa_amd_interop_unmap_buffer",
        "hsa_ext_image_create",
        "hsa_ext_image_create_with_layout",
        "hsa_ext_image_data_get_info",
        "hsa_ext_image_destroy",
        "hsa_ext_image_export",
        "hsa_ext_image_import",
        "hsa_ext_sampler_create",
        "hsa_ext_sampler_destroy",
    ];
    assert_eq!(
        unsupported, documented,
        "update the documented list deliberately"
    );
    eprintln!(
        "libamdhip64.so.5 imports: {} implemented, {} not modelled",
        imports.len() - unsupported.len(),
        unsupported.len()
    );
}
