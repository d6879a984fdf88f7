//! How a Rust type was spelled by `stringify!`, made comparable: shared by the tests that hold
//! ABI declarations to C headers (`tests/abi_headers.rs`, `hsa-abi/tests/entry_points.rs`),
//! which include this file with `#[path]`.

/// `ty` with spaces only where they separate two words, so that `Option < HostFn >` and
/// `Option<HostFn>` read the same.
pub fn normalise_rust(ty: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::new();
    let mut pending_space = false;
    for ch in ty.chars() {
        if ch.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space && out.ends_with(word) && word(ch) {
            out.push(' ');
        }
        pending_space = false;
        out.push(ch);
    }
    out
}
