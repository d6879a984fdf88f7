//! The C declarations in `hip_headers/` promise the signatures `libamdhip64.so` exports.
//!
//! Both are written by hand: the Rust shells in `src/api/` (listed with their ABI types in
//! `amdhip64::api::ABI_SIGNATURES`) and the declarations in `hip_headers/hip/`. This test holds
//! them together, and holds the shells to AMD's own header (ROCm 5.2) where that is installed.
//!
//! The headers are read by clang-19 itself (one `-ast-dump=json` run per header set), not by
//! pattern matching, so macros, typedefs and default arguments are resolved as a compiler
//! resolves them. A declaration counts when it has C language linkage (its mangled name is its
//! name: the symbol a program links against), is only declared (no inline body), and is named
//! `hip*` or `__hip*`.
//!
//! Types are compared by ABI class, not by spelling: every pointer (data, function, handle,
//! reference) is `ptr`; integers are classed by size and signedness (`size_t` is `u64`); an
//! enum has the integer type clang gives it (its fixed underlying type, else `int` when an
//! enumerator is negative and `unsigned int` otherwise); `dim3` by value is `dim3`. A type
//! either side spells in a way this test does not know fails the test with its spelling, so a
//! new type is classified once, here, rather than passing unchecked.

mod common;

#[path = "shared/rust_spelling.rs"]
mod rust_spelling;
use rust_spelling::normalise_rust;

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use amdhip64::api::{AbiSignature, ABI_SIGNATURES};

/// A table entry written by hand, for the tests that feed `check` deliberate mistakes.
macro_rules! sig {
    ($name:literal ($($param:literal),*) -> $ret:literal) => {
        AbiSignature { name: $name, params: &[$($param),*], ret: $ret }
    };
}

/// Exported functions `hip_headers/` deliberately does not declare, each with the reason.
const NOT_IN_HIP_HEADERS: &[(&str, &str)] = &[
    // As in ROCm 6, the header makes the unsuffixed names macros for the R0600 forms, so it
    // cannot declare them; the unsuffixed and R0000 exports take ROCm 5's property layout
    // and exist for binaries built against ROCm 5.
    (
        "hipGetDeviceProperties",
        "a macro for hipGetDevicePropertiesR0600",
    ),
    ("hipChooseDevice", "a macro for hipChooseDeviceR0600"),
    ("hipGetDevicePropertiesR0000", "ROCm 5 binaries only"),
    ("hipChooseDeviceR0000", "ROCm 5 binaries only"),
    // AMD's hip_ext.h declares these two C++ only; ours declare the C names (and the same
    // functions are exported under both).
    (
        "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j",
        "the C++ name of hipExtModuleLaunchKernel",
    ),
    (
        "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_",
        "the C++ name of hipHccModuleLaunchKernel",
    ),
    // ROCm 5.2 declares the surface calls C++ only and exports only these names; hipshim's
    // headers have no device-side surface functions to go with them.
    (
        "_Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc",
        "the C++ name of hipCreateSurfaceObject",
    ),
    (
        "_Z23hipDestroySurfaceObjectP13__hip_surface",
        "the C++ name of hipDestroySurfaceObject",
    ),
];

/// The ABI class of a parameter or return type: what decides how a value crosses the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Ptr,
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    Dim3,
    /// Structures passed or returned by value (`runtime/image/array.rs`): each its own class.
    Extent,
    PitchedPtr,
    ChannelDesc,
    /// `hipIpcMemHandle_t`, `hipIpcEventHandle_t`: 64 bytes by value.
    IpcHandle,
    /// `hipMemLocation`: 8 bytes by value (`hipMemAdvise_v2`, `hipMemPrefetchAsync_v2`).
    MemLocation,
    Void,
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = format!("{self:?}").to_lowercase();
        f.write_str(&name)
    }
}

/// A signature as classes: parameters, then the return.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Classes {
    params: Vec<Class>,
    ret: Class,
}

impl fmt::Display for Classes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<String> = self.params.iter().map(Class::to_string).collect();
        write!(f, "({}) -> {}", params.join(", "), self.ret)
    }
}

/// The integer and floating types both languages spell the same way.
fn scalar_class(name: &str) -> Option<Class> {
    Some(match name {
        "bool" => Class::Bool,
        "i8" => Class::I8,
        "u8" => Class::U8,
        "i16" => Class::I16,
        "u16" => Class::U16,
        "i32" => Class::I32,
        "u32" => Class::U32,
        "i64" => Class::I64,
        "u64" => Class::U64,
        "f32" => Class::F32,
        "f64" => Class::F64,
        _ => return None,
    })
}

// ---- The Rust side ----------------------------------------------------------------------

/// Type names the shells use that are defined in the crate, with the class of what they name.
/// Function-pointer aliases are here too: they appear inside `Option<..>`.
const RUST_ALIASES: &[(&str, Class)] = &[
    ("hipError_t", Class::U32), // src/error.rs: `pub type hipError_t = u32`
    ("hipStream_t", Class::Ptr),
    ("hipEvent_t", Class::Ptr),
    ("hipModule_t", Class::Ptr),
    ("hipFunction_t", Class::Ptr),
    ("hipKernel_t", Class::Ptr),
    ("hipLibrary_t", Class::Ptr),
    ("hipMemPool_t", Class::Ptr),
    ("hipGraph_t", Class::Ptr),
    ("hipGraphNode_t", Class::Ptr),
    ("hipGraphExec_t", Class::Ptr),
    ("hipUserObject_t", Class::Ptr),
    ("hipMemGenericAllocationHandle_t", Class::Ptr),
    ("hipDeviceptr_t", Class::Ptr),
    ("hiprtcResult", Class::U32), // src/api/types.rs: `pub type hiprtcResult = u32`
    ("hiprtcProgram", Class::Ptr),
    ("hiprtcLinkState", Class::Ptr),
    ("hipLinkState_t", Class::Ptr),
    ("StreamCallback", Class::Ptr), // src/api/stream.rs: an `unsafe extern "C" fn`
    ("HostFn", Class::Ptr),         // src/api/stream.rs: an `unsafe extern "C" fn`
];

fn rust_class(ty: &str) -> Result<Class, String> {
    let ty = normalise_rust(ty);
    let is_fn_pointer = |t: &str| {
        let t = t.strip_prefix("unsafe ").unwrap_or(t);
        let t = t.strip_prefix("extern\"C\"").unwrap_or(t);
        t.trim_start().starts_with("fn(")
    };
    let class = if ty.starts_with('*') || ty.starts_with('&') || is_fn_pointer(&ty) {
        Some(Class::Ptr)
    } else if let Some(inner) = ty.strip_prefix("Option<").and_then(|t| t.strip_suffix('>')) {
        // Only the non-null types whose None is the null pointer.
        let nullable = inner.starts_with('&')
            || inner.starts_with("NonNull<")
            || is_fn_pointer(inner)
            || RUST_ALIASES
                .iter()
                .any(|(name, class)| *name == inner && *class == Class::Ptr);
        nullable.then_some(Class::Ptr)
    } else {
        match ty.as_str() {
            "()" => Some(Class::Void),
            "Dim3" => Some(Class::Dim3),
            "Extent" => Some(Class::Extent),
            "PitchedPtr" => Some(Class::PitchedPtr),
            "ChannelFormatDesc" => Some(Class::ChannelDesc),
            "IpcHandle" => Some(Class::IpcHandle),
            "MemLocation" => Some(Class::MemLocation),
            "usize" | "c_ulong" | "c_ulonglong" => Some(Class::U64),
            "isize" | "c_long" | "c_longlong" => Some(Class::I64),
            "c_int" => Some(Class::I32),
            "c_uint" => Some(Class::U32),
            "c_char" | "c_schar" => Some(Class::I8),
            "c_uchar" => Some(Class::U8),
            "c_float" => Some(Class::F32),
            "c_double" => Some(Class::F64),
            name => scalar_class(name).or_else(|| {
                RUST_ALIASES
                    .iter()
                    .find(|(alias, _)| *alias == name)
                    .map(|(_, class)| *class)
            }),
        }
    };
    class.ok_or_else(|| format!("unknown Rust ABI type `{ty}` (classify it in rust_class)"))
}

fn rust_classes(sig: &AbiSignature) -> Result<Classes, Vec<String>> {
    let params: Vec<Result<Class, String>> = sig.params.iter().map(|p| rust_class(p)).collect();
    let ret = rust_class(sig.ret);
    let errors: Vec<String> = params
        .iter()
        .chain([&ret])
        .filter_map(|c| c.clone().err())
        .map(|e| format!("{}: {e}", sig.name))
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Classes {
        params: params.into_iter().map(Result::unwrap).collect(),
        ret: ret.unwrap(),
    })
}

// ---- The C side ------------------------------------------------------------------------

/// A C function declaration as clang printed its types.
#[derive(Debug)]
struct CFunction {
    params: Vec<String>,
    ret: String,
}

/// What one clang run found: the functions, and the types needed to classify them.
#[derive(Debug, Default)]
struct Header {
    functions: BTreeMap<String, CFunction>,
    /// Typedef name → the type it names (desugared where clang gave that).
    typedefs: BTreeMap<String, String>,
    /// Enum name → its integer class, or why it has none.
    enums: BTreeMap<String, Result<Class, String>>,
}

/// Parses the host view of `hip/hip_runtime.h` (and `hip/hiprtc.h`) found under `include` (or the system path when
/// `include` is `None`) with clang-19, dumping only declarations whose name contains `hip`.
fn parse_header(include: Option<&Path>, defines: &[&str]) -> Result<Header, String> {
    let clang = common::require_tool(common::ctest::CLANG);
    let mut cmd = Command::new(&clang);
    cmd.args(["-x", "c++", "-std=c++17", "-fsyntax-only"])
        .args([
            "-Xclang",
            "-ast-dump=json",
            "-Xclang",
            "-ast-dump-filter=hip",
        ])
        .args(defines.iter().map(|d| format!("-D{d}")));
    if let Some(dir) = include {
        // Searched before the system directories, where a ROCm may have its own hip/.
        cmd.arg("-I").arg(dir);
    }
    cmd.args(["-include", "hip/hip_runtime.h"]);
    // hiprtc's declarations have a header of their own (ROCm 5's libamdhip64 exports them).
    let rtc_dir = include.or(amd_include_dir());
    if rtc_dir.is_some_and(|dir| dir.join("hip/hiprtc.h").is_file()) {
        cmd.args(["-include", "hip/hiprtc.h"]);
    }
    cmd.arg("/dev/null");
    let output = cmd
        .output()
        .map_err(|e| format!("running {}: {e}", clang.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed on hip/hip_runtime.h ({:?}):\n{}",
            clang.display(),
            cmd,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let mut header = Header::default();
    for node in serde_json::Deserializer::from_slice(&output.stdout).into_iter::<Value>() {
        let node = node.map_err(|e| format!("clang's JSON: {e}"))?;
        header.add(&node);
    }
    Ok(header)
}

fn type_of(node: &Value) -> String {
    let ty = &node["type"];
    ty.get("desugaredQualType")
        .or_else(|| ty.get("qualType"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

impl Header {
    fn add(&mut self, node: &Value) {
        let name = node["name"].as_str().unwrap_or_default().to_string();
        match node["kind"].as_str() {
            Some("FunctionDecl") => {
                let c_linkage = node["mangledName"].as_str() == Some(&name);
                let inner = node["inner"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                let has_body = inner.iter().any(|n| n["kind"] == "CompoundStmt");
                let host_api = name.starts_with("hip") || name.starts_with("__hip");
                if !host_api || has_body {
                    return;
                }
                // A C++ declaration is known by its mangled name, the symbol it imports (AMD's
                // hip_ext.h declares its module launches so).
                let name = if c_linkage {
                    name
                } else {
                    match node["mangledName"].as_str() {
                        Some(mangled) => mangled.to_string(),
                        None => return,
                    }
                };
                let mut params: Vec<String> = inner
                    .iter()
                    .filter(|n| n["kind"] == "ParmVarDecl")
                    .map(type_of)
                    .collect();
                if node["variadic"] == true {
                    // Passed differently from any fixed parameter list: no class matches it.
                    params.push("...".into());
                }
                let function_type = node["type"]["qualType"].as_str().unwrap_or_default();
                // "R (P1, P2)": the return type is what precedes the parameter list.
                let ret = function_type
                    .split_once('(')
                    .map_or(function_type, |(ret, _)| ret)
                    .trim()
                    .to_string();
                self.functions
                    .entry(name)
                    .or_insert(CFunction { params, ret });
            }
            Some("TypedefDecl") => {
                self.typedefs.insert(name, type_of(node));
            }
            Some("EnumDecl") if !name.is_empty() => {
                self.enums.insert(name.clone(), enum_class(&name, node));
            }
            _ => {}
        }
    }

    fn class(&self, ty: &str) -> Result<Class, String> {
        self.class_within(ty, 0)
            .ok_or_else(|| format!("unknown C type `{ty}` (classify it in Header::class)"))?
    }

    fn class_within(&self, ty: &str, depth: usize) -> Option<Result<Class, String>> {
        let mut t = ty.trim();
        while let Some(rest) = ["const", "volatile", "__restrict", "restrict"]
            .iter()
            .find_map(|q| t.strip_suffix(q).filter(|r| r.ends_with([' ', '*', '&'])))
        {
            t = rest.trim_end();
        }
        if t.ends_with('*') || t.ends_with('&') || t.contains("(*") || t.contains("(&") {
            return Some(Ok(Class::Ptr));
        }
        for prefix in [
            "const ",
            "volatile ",
            "struct ",
            "enum ",
            "union ",
            "class ",
        ] {
            t = t.strip_prefix(prefix).unwrap_or(t);
        }
        let builtin = match t {
            "void" => Some(Class::Void),
            "bool" | "_Bool" => Some(Class::Bool),
            "char" | "signed char" => Some(Class::I8),
            "unsigned char" => Some(Class::U8),
            "short" => Some(Class::I16),
            "unsigned short" => Some(Class::U16),
            "int" => Some(Class::I32),
            "unsigned int" => Some(Class::U32),
            "long" | "long long" => Some(Class::I64),
            "unsigned long" | "unsigned long long" => Some(Class::U64),
            "float" => Some(Class::F32),
            "double" => Some(Class::F64),
            "dim3" => Some(Class::Dim3),
            "hipExtent" => Some(Class::Extent),
            "hipPitchedPtr" => Some(Class::PitchedPtr),
            "hipChannelFormatDesc" => Some(Class::ChannelDesc),
            "hipMemLocation" => Some(Class::MemLocation),
            "hipIpcMemHandle_st"
            | "hipIpcMemHandle_t"
            | "hipIpcEventHandle_st"
            | "hipIpcEventHandle_t" => Some(Class::IpcHandle),
            _ => None,
        };
        if let Some(class) = builtin {
            return Some(Ok(class));
        }
        if let Some(class) = self.enums.get(t) {
            return Some(class.clone());
        }
        match self.typedefs.get(t) {
            Some(target) if depth < 16 && target != t => self.class_within(target, depth + 1),
            _ => None,
        }
    }

    fn classes(&self, name: &str, f: &CFunction) -> Result<Classes, Vec<String>> {
        let params: Vec<Result<Class, String>> = f.params.iter().map(|p| self.class(p)).collect();
        let ret = self.class(&f.ret);
        let errors: Vec<String> = params
            .iter()
            .chain([&ret])
            .filter_map(|c| c.clone().err())
            .map(|e| format!("{name}: {e}"))
            .collect();
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Classes {
            params: params.into_iter().map(Result::unwrap).collect(),
            ret: ret.unwrap(),
        })
    }
}

/// The integer class clang gives the enum `node`: its fixed underlying type, else (C++'s rule
/// for enumerators that fit in 32 bits) `int` if one is negative and `unsigned int` if not.
fn enum_class(name: &str, node: &Value) -> Result<Class, String> {
    if let Some(fixed) = node["fixedUnderlyingType"]["desugaredQualType"]
        .as_str()
        .or_else(|| node["fixedUnderlyingType"]["qualType"].as_str())
    {
        return Header::default().class(fixed);
    }
    let (mut next, mut min, mut max) = (0i128, 0i128, 0i128);
    for constant in node["inner"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["kind"] == "EnumConstantDecl")
    {
        let value = match constant["inner"].as_array().and_then(|i| i.first()) {
            None => next, // no initialiser: one more than the previous enumerator
            Some(init) => constant_value(init).ok_or_else(|| {
                format!("enum {name}: clang gave no value for {}", constant["name"])
            })?,
        };
        (min, max, next) = (min.min(value), max.max(value), value + 1);
    }
    if min < 0 && min >= i32::MIN.into() && max <= i32::MAX.into() {
        Ok(Class::I32)
    } else if min >= 0 && max <= u32::MAX.into() {
        Ok(Class::U32)
    } else {
        Err(format!(
            "enum {name}: values {min}..={max} need a 64-bit type"
        ))
    }
}

/// The value clang computed for an enumerator's initialiser: on its `ConstantExpr`, which may
/// sit under implicit conversions to the enum's type.
fn constant_value(init: &Value) -> Option<i128> {
    let mut node = init;
    loop {
        if let Some(value) = node["value"].as_str() {
            return value.parse().ok();
        }
        node = node["inner"].as_array()?.first()?;
    }
}

// ---- The comparison --------------------------------------------------------------------

/// Every way `signatures` and `header` disagree, for the names both have. `all_declared`
/// also requires each signature to be declared (unless listed in `NOT_IN_HIP_HEADERS`) and
/// every declaration's types to be classifiable.
fn compare(signatures: &[AbiSignature], header: &Header, all_declared: bool) -> Vec<String> {
    let mut problems = Vec::new();
    for sig in signatures {
        let rust = rust_classes(sig);
        if let Err(errors) = &rust {
            problems.extend(errors.iter().cloned());
        }
        let Some(decl) = header.functions.get(sig.name) else {
            if all_declared && !NOT_IN_HIP_HEADERS.iter().any(|(n, _)| *n == sig.name) {
                problems.push(format!(
                    "{}: exported but not declared in the header",
                    sig.name
                ));
            }
            continue;
        };
        let c = header.classes(sig.name, decl);
        if let Err(errors) = &c {
            problems.extend(errors.iter().cloned());
        }
        if let (Ok(rust), Ok(c)) = (rust, c) {
            if rust != c {
                problems.push(format!(
                    "{}: header {c} (from {:?} -> {}), Rust {rust} (from {:?} -> {})",
                    sig.name, decl.params, decl.ret, sig.params, sig.ret
                ));
            }
        }
    }
    if all_declared {
        for (name, decl) in &header.functions {
            if let Err(errors) = header.classes(name, decl) {
                if !signatures.iter().any(|s| s.name == name) {
                    problems.extend(errors);
                }
            }
        }
    }
    problems
}

fn hip_headers() -> &'static Header {
    static HEADER: OnceLock<Header> = OnceLock::new();
    HEADER.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("hip_headers");
        parse_header(Some(&dir), &[]).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// Where AMD's `hip/hip_runtime_api.h` is installed (Debian's libamdhip64-dev puts it in
/// /usr/include), or `None`.
fn amd_include_dir() -> Option<&'static Path> {
    ["/usr/include", "/opt/rocm/include"]
        .into_iter()
        .map(Path::new)
        .find(|dir| dir.join("hip/hip_runtime_api.h").is_file())
}

/// Mismatches between `signatures` and `hip_headers/` (see `compare`).
fn check(signatures: &[AbiSignature]) -> Vec<String> {
    compare(signatures, hip_headers(), true)
}

#[test]
fn hip_headers_declare_every_export_with_its_abi() {
    let header = hip_headers();
    assert!(
        header.functions.len() > 100 && header.functions.contains_key("hipLaunchKernel"),
        "the reader found too little in hip_headers/: {:?}",
        header.functions.keys()
    );
    let problems = check(ABI_SIGNATURES);
    let unimplemented: Vec<&String> = header
        .functions
        .keys()
        .filter(|name| !ABI_SIGNATURES.iter().any(|s| s.name == *name))
        .collect();
    if !unimplemented.is_empty() {
        println!(
            "declared in hip_headers/ without a Rust shell (hipErrorNotSupported stubs): {}",
            unimplemented.len()
        );
        for name in unimplemented {
            println!("  {name}");
        }
    }
    assert!(
        problems.is_empty(),
        "hip_headers/ and the exported signatures disagree:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn amds_header_declares_the_exports_it_has_with_the_same_abi() {
    let Some(dir) = amd_include_dir() else {
        println!(
            "SKIPPED: AMD's hip/hip_runtime_api.h is not installed (Debian: libamdhip64-dev, \
             which scripts/setup.sh installs); nothing was compared"
        );
        return;
    };
    // AMD's header refuses to guess the platform.
    let header = parse_header(None, &["__HIP_PLATFORM_AMD__"])
        .unwrap_or_else(|e| panic!("AMD's header in {}: {e}", dir.display()));
    let declared = ABI_SIGNATURES
        .iter()
        .filter(|s| header.functions.contains_key(s.name))
        .count();
    let undeclared: Vec<&str> = ABI_SIGNATURES
        .iter()
        .map(|s| s.name)
        .filter(|name| !header.functions.contains_key(*name))
        .collect();
    println!(
        "{declared} of {} exported signatures are declared in AMD's header under {}; not: {}",
        ABI_SIGNATURES.len(),
        dir.display(),
        undeclared.join(" ")
    );
    assert!(
        declared * 2 > ABI_SIGNATURES.len(),
        "AMD's header declares too few of the exports; did the reader lose its way?"
    );
    let problems = compare(ABI_SIGNATURES, &header, false);
    assert!(
        problems.is_empty(),
        "the exported signatures disagree with AMD's header in {}:\n  {}",
        dir.display(),
        problems.join("\n  ")
    );
}

#[test]
fn the_check_reports_each_kind_of_disagreement() {
    let wrong = [
        sig!("hipSetDevice"("u32") -> "hipError_t"),
        sig!("hipMalloc"("*mut *mut c_void") -> "hipError_t"),
        sig!("hipGetErrorName"("hipError_t") -> "()"),
        sig!("hipDeviceSynchronize"() -> "Vec<u8>"),
        sig!("hipNoSuchFunction"() -> "hipError_t"),
    ];
    let problems = check(&wrong);
    let expected = [
        "hipSetDevice: header (i32) -> u32",
        "hipMalloc: header (ptr, u64) -> u32",
        "hipGetErrorName: header (u32) -> ptr",
        "hipDeviceSynchronize: unknown Rust ABI type `Vec<u8>`",
        "hipNoSuchFunction: exported but not declared",
    ];
    for want in expected {
        assert!(
            problems.iter().any(|p| p.starts_with(want)),
            "no problem starting with {want:?} in {problems:#?}"
        );
    }
    assert_eq!(problems.len(), expected.len(), "{problems:#?}");
}

#[test]
fn both_sides_classify_the_spellings_they_use() {
    for (rust, class) in [
        ("* mut * mut c_void", Class::Ptr),
        ("*mut [u8; 16]", Class::Ptr),
        ("Option < StreamCallback >", Class::Ptr),
        ("Option<unsafe extern \"C\" fn(*mut c_void)>", Class::Ptr),
        ("usize", Class::U64),
        ("hipError_t", Class::U32),
        ("Dim3", Class::Dim3),
        ("()", Class::Void),
    ] {
        assert_eq!(rust_class(rust), Ok(class), "{rust}");
    }
    assert!(rust_class("Option<u32>").is_err());
    let header = hip_headers();
    for (c, class) in [
        ("void (*)(hipStream_t, hipError_t, void *)", Class::Ptr),
        ("const char *const", Class::Ptr),
        ("hipStream_t", Class::Ptr),
        ("hipMemcpyKind", Class::U32),
        ("hipError_t", Class::U32),
        ("hipDevice_t", Class::I32),
        ("unsigned long", Class::U64),
        ("dim3", Class::Dim3),
    ] {
        assert_eq!(header.class(c), Ok(class), "{c}");
    }
    assert!(header.class("struct hipUUID_t").is_err());
}
