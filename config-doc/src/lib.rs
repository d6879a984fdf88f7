//! The description of one setting (an environment variable) of hipshim or hsasim.
//!
//! Each library keeps one table of these next to its typed `Config` (`src/config.rs`,
//! `sim/src/config.rs`). The parser reads each variable by the table's name and words its
//! malformed-value warning from the table's accepted forms and default, and `hipshim config
//! reference` prints the same rows as `docs/reference/configuration.md`; so what the page
//! says is what the code does. The type lives in a crate of its own because neither library
//! may depend on the other.

use std::fmt;

/// One setting as the configuration reference and the malformed-value warning show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettingDoc {
    /// The environment variable.
    pub name: &'static str,
    /// The values it takes.
    pub accepted: Accepted,
    /// What applies when it is unset (or empty), in words or as the value itself.
    pub default: &'static str,
    /// What it does: one paragraph of Markdown.
    pub meaning: &'static str,
    /// The `hipshim run` option that sets it (`--policy`), if one does.
    pub run_flag: Option<&'static str>,
}

/// The values a setting takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accepted {
    /// Described in words (`auto | gpu | sim`, `a file path`).
    Forms(&'static str),
    /// An integer from `min` to `max`, both included; the parser checks these bounds, so the
    /// text and the check cannot drift apart.
    Integer { min: u64, max: u64 },
}

impl fmt::Display for Accepted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Accepted::Forms(text) => f.write_str(text),
            Accepted::Integer { min, max } => write!(f, "an integer from {min} to {max}"),
        }
    }
}

impl SettingDoc {
    /// The warning for a malformed `value` (without the library's `name: ` prefix): the
    /// variable, what it takes and what is used instead, so a typo never silently changes
    /// the setting.
    pub fn malformed(&self, value: &str) -> String {
        format!(
            "ignoring {}={value:?}: expected {}; using the default ({})",
            self.name, self.accepted, self.default
        )
    }

    /// `text` as this setting's integer: a number within [`Accepted::Integer`]'s bounds,
    /// surrounding blanks allowed. `None` when malformed, out of range, or when the setting
    /// is not an integer one.
    pub fn integer<T: TryFrom<u64>>(&self, text: &str) -> Option<T> {
        let Accepted::Integer { min, max } = self.accepted else {
            return None;
        };
        let n: u64 = text.trim().parse().ok()?;
        if (min..=max).contains(&n) {
            T::try_from(n).ok()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COUNT: SettingDoc = SettingDoc {
        name: "X_COUNT",
        accepted: Accepted::Integer { min: 1, max: 16 },
        default: "4",
        meaning: "How many.",
        run_flag: None,
    };

    #[test]
    fn integers_are_taken_within_the_documented_bounds_only() {
        assert_eq!(COUNT.integer::<u32>(" 16 "), Some(16));
        assert_eq!(COUNT.integer::<u32>("1"), Some(1));
        for bad in ["0", "17", "-1", "4.0", "", "four", "18446744073709551616"] {
            assert_eq!(COUNT.integer::<u32>(bad), None, "{bad:?}");
        }
        let wide = SettingDoc {
            accepted: Accepted::Integer {
                min: 0,
                max: u64::MAX,
            },
            ..COUNT
        };
        assert_eq!(wide.integer::<u8>("300"), None, "does not fit the type");
        assert_eq!(wide.integer::<u64>("18446744073709551615"), Some(u64::MAX));
    }

    #[test]
    fn a_warning_names_the_variable_the_accepted_forms_and_the_default() {
        assert_eq!(
            COUNT.malformed("lots"),
            "ignoring X_COUNT=\"lots\": expected an integer from 1 to 16; using the default (4)"
        );
    }
}
