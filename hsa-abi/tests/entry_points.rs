//! The entry points `hsa_abi::fns` declares against ROCm's installed `hsa.h` and
//! `hsa_ext_amd.h` (Debian's libhsa-runtime-dev installs ROCm 5.2's), signature by
//! signature: hipshim's table and hsasim's exports are checked against the declaration
//! (`src/hsa/api.rs` is built from it, `sim/tests/abi_signatures.rs` compiles against it),
//! and this test holds the declaration to the headers.
//!
//! clang-19 reads the headers (one `-ast-dump=json` run), so typedefs and enums are resolved
//! as a compiler resolves them. Types are compared by ABI class, not by spelling: every data
//! or function pointer is `ptr` whatever it points at (`*const` where the header forgot
//! `const` is the same ABI); integers by size and signedness; a C enum is `u32` (hsa-abi
//! writes enums as `u32`; the HSA enums have no negative values); a handle struct passed by
//! value is its own class, by name. A type either side spells in a way this test does not
//! know fails it with the spelling, so a new type is classified here once rather than
//! passing unchecked. Without clang-19 or the headers the test says so and passes.

#[path = "../../tests/shared/rust_spelling.rs"]
mod rust_spelling;
use rust_spelling::normalise_rust;

use hsa_abi::fns::{Role, ENTRY_POINTS};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

const CLANG: &str = "clang-19";
const INCLUDE_DIR: &str = "/usr/include";
const HEADERS: &[&str] = &["hsa/hsa.h", "hsa/hsa_ext_amd.h"];

/// Declared in hsa-abi from a newer ROCm than 5.2 (whose headers lack them).
const NEWER_THAN_ROCM_5_2: &[(&str, &str)] = &[
    ("hsa_amd_memory_async_copy_on_engine", "ROCm 5.6"),
    ("hsa_amd_memory_copy_engine_status", "ROCm 5.6"),
    ("hsa_amd_vmem_address_reserve", "ROCm 6.0"),
    ("hsa_amd_vmem_address_reserve_align", "ROCm 6.2"),
    ("hsa_amd_vmem_address_free", "ROCm 6.0"),
    ("hsa_amd_vmem_handle_create", "ROCm 6.0"),
    ("hsa_amd_vmem_handle_release", "ROCm 6.0"),
    ("hsa_amd_vmem_map", "ROCm 6.0"),
    ("hsa_amd_vmem_unmap", "ROCm 6.0"),
    ("hsa_amd_vmem_set_access", "ROCm 6.0"),
    ("hsa_amd_vmem_get_access", "ROCm 6.0"),
    ("hsa_amd_vmem_export_shareable_handle", "ROCm 6.0"),
    ("hsa_amd_vmem_import_shareable_handle", "ROCm 6.0"),
    ("hsa_amd_vmem_retain_alloc_handle", "ROCm 6.0"),
    ("hsa_amd_vmem_get_alloc_properties_from_handle", "ROCm 6.0"),
];

/// What decides how a value crosses the call.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Class {
    Ptr,
    Bool,
    I32,
    U16,
    U32,
    I64,
    U64,
    /// A struct by value, by its C typedef name (`hsa_agent_t`).
    Struct(String),
    Void,
}

/// hsa-abi's handle structs passed by value: each is its own class.
const STRUCTS: &[&str] = &[
    "hsa_agent_t",
    "hsa_signal_t",
    "hsa_isa_t",
    "hsa_region_t",
    "hsa_amd_memory_pool_t",
    "hsa_executable_t",
    "hsa_executable_symbol_t",
    "hsa_code_object_reader_t",
    "hsa_loaded_code_object_t",
    "hsa_cache_t",
    "hsa_wavefront_t",
    "hsa_signal_group_t",
    "hsa_amd_vmem_alloc_handle_t",
];

/// hsa-abi's function-pointer aliases (bare or inside `Option`, whose `None` is null).
const FN_POINTER_ALIASES: &[&str] = &[
    "AgentCallback",
    "PoolCallback",
    "QueueErrorCallback",
    "SignalHandler",
    "IsaCallback",
    "SymbolCallback",
    "AgentSymbolCallback",
    "RegionCallback",
    "CacheCallback",
    "WavefrontCallback",
    "PointerInfoAlloc",
];

fn rust_class(ty: &str) -> Result<Class, String> {
    let ty = normalise_rust(ty);
    let fn_pointer = |t: &str| FN_POINTER_ALIASES.contains(&t) || t.contains("fn(");
    let class = if ty.starts_with('*') || fn_pointer(&ty) {
        Some(Class::Ptr)
    } else if let Some(inner) = ty.strip_prefix("Option<").and_then(|t| t.strip_suffix('>')) {
        fn_pointer(inner).then_some(Class::Ptr)
    } else {
        match ty.as_str() {
            "()" => Some(Class::Void),
            "bool" => Some(Class::Bool),
            "i32" => Some(Class::I32),
            "u16" => Some(Class::U16),
            "u32" | "hsa_status_t" => Some(Class::U32),
            "i64" | "hsa_signal_value_t" => Some(Class::I64),
            "u64" | "usize" => Some(Class::U64),
            name if STRUCTS.contains(&name) => Some(Class::Struct(name.to_string())),
            _ => None,
        }
    };
    class.ok_or_else(|| format!("unknown Rust type `{ty}` (classify it in rust_class)"))
}

/// A C parameter or return type as clang printed it.
#[derive(Debug)]
struct CType {
    spelled: String,
    desugared: Option<String>,
}

#[derive(Debug, Default)]
struct Header {
    functions: BTreeMap<String, (Vec<CType>, CType)>,
    /// Typedef names that name an enum.
    enums: BTreeSet<String>,
    /// Other `hsa_*` typedefs: name -> the type it names, as spelled.
    typedefs: BTreeMap<String, String>,
}

/// The `<stdint.h>` / `<stddef.h>` typedefs the headers use, as x86-64 Linux defines them
/// (return types print undesugared).
const STD_TYPEDEFS: &[(&str, &str)] = &[
    ("int32_t", "int"),
    ("int64_t", "long"),
    ("uint16_t", "unsigned short"),
    ("uint32_t", "unsigned int"),
    ("uint64_t", "unsigned long"),
    ("size_t", "unsigned long"),
];

impl Header {
    fn class(&self, ty: &CType) -> Result<Class, String> {
        let mut base = ty.desugared.as_deref().unwrap_or(&ty.spelled);
        base = base.strip_prefix("const ").unwrap_or(base);
        // Typedefs of typedefs (`hsa_signal_value_t` -> `int64_t` -> `long`) end in a few steps.
        for _ in 0..4 {
            let std = STD_TYPEDEFS
                .iter()
                .find(|(name, _)| *name == base)
                .map(|(_, t)| *t);
            match std.or_else(|| self.typedefs.get(base).map(String::as_str)) {
                Some(named) if !self.enums.contains(base) => base = named,
                _ => break,
            }
        }
        let class = if base.contains('*') {
            Some(Class::Ptr)
        } else if base.starts_with("struct ") {
            Some(Class::Struct(ty.spelled.clone()))
        } else if base.starts_with("enum ") || self.enums.contains(base) {
            Some(Class::U32)
        } else {
            match base {
                "void" => Some(Class::Void),
                "bool" | "_Bool" => Some(Class::Bool),
                "int" => Some(Class::I32),
                "unsigned short" => Some(Class::U16),
                "unsigned int" => Some(Class::U32),
                "long" => Some(Class::I64),
                "unsigned long" => Some(Class::U64),
                _ => None,
            }
        };
        class.ok_or_else(|| {
            format!(
                "unknown C type `{}` (classify it in Header::class)",
                ty.spelled
            )
        })
    }

    fn add(&mut self, node: &Value) {
        let name = node["name"].as_str().unwrap_or_default();
        match node["kind"].as_str() {
            Some("FunctionDecl") => {
                let inner = node["inner"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                let params = inner
                    .iter()
                    .filter(|n| n["kind"] == "ParmVarDecl")
                    .map(c_type)
                    .collect();
                // The function type prints as `RET (PARAMS)`; the return type is before it.
                let function = node["type"]["qualType"].as_str().unwrap_or_default();
                let ret = function.split(" (").next().unwrap_or_default().to_string();
                let ret = CType {
                    desugared: None,
                    spelled: ret,
                };
                self.functions.insert(name.to_string(), (params, ret));
            }
            Some("TypedefDecl") => {
                // `typedef enum {...} NAME;` and `typedef enum NAME_s {...} NAME;`
                if node["inner"].to_string().contains("\"EnumType\"") {
                    self.enums.insert(name.to_string());
                } else if let Some(named) = node["type"]["qualType"].as_str() {
                    self.typedefs.insert(name.to_string(), named.to_string());
                }
            }
            _ => {}
        }
    }
}

fn c_type(node: &Value) -> CType {
    let ty = &node["type"];
    CType {
        spelled: ty["qualType"].as_str().unwrap_or_default().to_string(),
        desugared: ty["desugaredQualType"].as_str().map(str::to_string),
    }
}

/// The headers' declarations named `hsa_*`, or why they cannot be read here.
fn parse_headers() -> Result<Header, String> {
    let missing: Vec<_> = HEADERS
        .iter()
        .filter(|h| !Path::new(INCLUDE_DIR).join(h).exists())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{missing:?} not under {INCLUDE_DIR} (install libhsa-runtime-dev)"
        ));
    }
    let mut cmd = Command::new(CLANG);
    cmd.args(["-x", "c", "-std=c11", "-fsyntax-only", "-I", INCLUDE_DIR])
        .args([
            "-Xclang",
            "-ast-dump=json",
            "-Xclang",
            "-ast-dump-filter=hsa_",
        ]);
    for h in HEADERS {
        cmd.args(["-include", h]);
    }
    cmd.arg("/dev/null");
    let output = cmd.output().map_err(|e| format!("no {CLANG} ({e})"))?;
    assert!(
        output.status.success(),
        "{CLANG} failed on the headers:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut header = Header::default();
    for node in serde_json::Deserializer::from_slice(&output.stdout).into_iter::<Value>() {
        header.add(&node.expect("clang's JSON"));
    }
    Ok(header)
}

#[test]
fn declared_signatures_match_rocm_headers() {
    let header = match parse_headers() {
        Ok(header) => header,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let mut problems = Vec::new();
    let mut checked = 0;
    let mut newer = Vec::new();
    for entry in ENTRY_POINTS.iter().filter(|e| e.role != Role::NotModelled) {
        let Some((c_params, c_ret)) = header.functions.get(entry.name) else {
            match NEWER_THAN_ROCM_5_2
                .iter()
                .find(|(name, _)| *name == entry.name)
            {
                Some(_) => newer.push(entry.name),
                None => problems.push(format!(
                    "{}: not in the headers (misspelt, or list it in NEWER_THAN_ROCM_5_2)",
                    entry.name
                )),
            }
            continue;
        };
        let rust: Result<Vec<Class>, String> = entry
            .params
            .iter()
            .chain([&entry.ret])
            .map(|t| rust_class(t))
            .collect();
        let c: Result<Vec<Class>, String> = c_params
            .iter()
            .chain([c_ret])
            .map(|t| header.class(t))
            .collect();
        match (rust, c) {
            (Ok(rust), Ok(c)) if rust == c => checked += 1,
            (Ok(rust), Ok(c)) => problems.push(format!(
                "{}: hsa-abi {rust:?}, headers {c:?} (parameters, then the return)",
                entry.name
            )),
            (rust, c) => problems.extend(
                rust.err()
                    .into_iter()
                    .chain(c.err())
                    .map(|e| format!("{}: {e}", entry.name)),
            ),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!(
        "{checked} declared entry points match the headers; newer than the installed ROCm: \
         {newer:?}"
    );
}
