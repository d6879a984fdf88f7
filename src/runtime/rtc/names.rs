//! Name expressions: `hiprtcAddNameExpression("&kern<int>")` before compiling,
//! `hiprtcGetLoweredName` (`_Z4kernIiEvPT_`) after.
//!
//! Each expression becomes a device variable appended to the source,
//! `extern "C" __device__ const void* const __hipshim_name_expr_N = (const void*)(EXPR);`,
//! which makes the compiler instantiate what the expression names (a template kernel is
//! otherwise not emitted) and leaves its address in the code object. The code object is a
//! shared object, so that address is a dynamic relocation at the variable: `R_AMDGPU_64`
//! against the symbol, or `R_AMDGPU_RELATIVE64` whose addend is the symbol's address. The
//! symbol there is the lowered name.

use object::{Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, RelocationTarget};

const VARIABLE_PREFIX: &str = "__hipshim_name_expr_";

/// The declarations appended to a program's source for its name expressions (empty for
/// none). `#line` makes a mistake in an expression show as such in the log.
pub fn declarations(expressions: &[String]) -> String {
    if expressions.is_empty() {
        return String::new();
    }
    let mut text = String::from("\n#line 1 \"<hiprtc name expressions>\"\n");
    for (index, expression) in expressions.iter().enumerate() {
        text.push_str(&format!(
            "extern \"C\" __device__ const void* const {VARIABLE_PREFIX}{index} = \
             (const void*)({expression});\n"
        ));
    }
    text
}

/// (expression, lowered name) for each expression, read from the compiled code object; an
/// error is a text for the log.
pub fn lowered_names(
    code_object: &[u8],
    expressions: &[String],
) -> Result<Vec<(String, std::ffi::CString)>, String> {
    let file = object::File::parse(code_object)
        .map_err(|e| format!("hiprtc: the compiler's code object is unreadable: {e}\n"))?;
    expressions
        .iter()
        .enumerate()
        .map(|(index, expression)| {
            let name = target_of(&file, &format!("{VARIABLE_PREFIX}{index}")).ok_or_else(|| {
                format!("hiprtc: cannot find what name expression `{expression}` refers to\n")
            })?;
            let name = std::ffi::CString::new(name)
                .map_err(|_| format!("hiprtc: the symbol for `{expression}` holds a NUL\n"))?;
            Ok((expression.clone(), name))
        })
        .collect()
}

/// The name of the symbol whose address the variable `variable` holds.
fn target_of(file: &object::File, variable: &str) -> Option<String> {
    let slot = file.symbols().find(|s| s.name() == Ok(variable))?.address();
    let relocation = file
        .dynamic_relocations()?
        .find(|(offset, _)| *offset == slot)
        .map(|(_, r)| r);
    let address = match relocation {
        Some(relocation) => match relocation.target() {
            RelocationTarget::Symbol(index) => {
                let symbol = file.dynamic_symbol_table()?.symbol_by_index(index).ok()?;
                return symbol.name().ok().map(str::to_owned);
            }
            _ => relocation.addend() as u64,
        },
        // Not relocated: the address is in the variable itself.
        None => {
            let section = file
                .sections()
                .find(|s| (s.address()..s.address() + s.size()).contains(&slot))?;
            let data = section.data().ok()?;
            let at = usize::try_from(slot - section.address()).ok()?;
            u64::from_le_bytes(data.get(at..at + 8)?.try_into().ok()?)
        }
    };
    file.symbols()
        .filter(|s| {
            s.address() == address && !s.name().is_ok_and(|n| n.starts_with(VARIABLE_PREFIX))
        })
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .find(|n| !n.is_empty() && !n.ends_with(".kd"))
}
