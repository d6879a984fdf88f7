//! Target ids, and picking the entry that runs on an agent.

use std::fmt;

use super::{CodeObjectError, Result};

// ---------------------------------------------------------------------------------------
// Target ids.

/// An AMDGPU target id: processor plus the two target features a code object may pin
/// (AMDGPUUsage "Target ID"). `None` means "any" in a code object, "not reported" for an
/// agent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TargetId {
    pub processor: String,
    pub sramecc: Option<bool>,
    pub xnack: Option<bool>,
}

impl TargetId {
    /// Parses a bare target id (`gfx90a:xnack-`) or a full HSA ISA name
    /// (`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`).
    pub fn parse(s: &str) -> Result<Self> {
        let bad = |why: &str| CodeObjectError::InvalidTargetId(format!("{s:?}: {why}"));
        let target = if s.starts_with("amdgcn-") {
            // The triple has four components (the environment is empty for amdhsa), so the
            // target id is everything after the fourth '-'; it may itself contain '-'
            // (`gfx9-generic`).
            let mut dashes = s.match_indices('-').map(|(i, _)| i);
            let fourth = dashes.nth(3).ok_or_else(|| bad("triple too short"))?;
            let triple = &s[..fourth];
            if !triple.starts_with("amdgcn-amd-amdhsa") {
                return Err(bad("not an amdgcn-amd-amdhsa target"));
            }
            &s[fourth + 1..]
        } else {
            s
        };
        let mut parts = target.split(':');
        let processor = parts.next().unwrap_or("");
        if processor.is_empty()
            || !processor
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(bad("missing or malformed processor name"));
        }
        let mut id = TargetId {
            processor: processor.to_owned(),
            sramecc: None,
            xnack: None,
        };
        for feature in parts {
            let (name, on) = if let Some(name) = feature.strip_suffix('+') {
                (name, true)
            } else if let Some(name) = feature.strip_suffix('-') {
                (name, false)
            } else {
                return Err(bad("a feature must end in '+' or '-'"));
            };
            let slot = match name {
                "sramecc" => &mut id.sramecc,
                "xnack" => &mut id.xnack,
                _ => return Err(bad("unknown feature (known: sramecc, xnack)")),
            };
            if slot.replace(on).is_some() {
                return Err(bad("feature given twice"));
            }
        }
        Ok(id)
    }

    /// Whether a code object built for `self` runs on an agent whose ISA is `agent`: same
    /// processor, and every feature the code object pins has the agent's setting.
    pub fn runs_on(&self, agent: &TargetId) -> bool {
        fn feature_ok(code: Option<bool>, agent: Option<bool>) -> bool {
            code.is_none() || code == agent
        }
        self.processor == agent.processor
            && feature_ok(self.sramecc, agent.sramecc)
            && feature_ok(self.xnack, agent.xnack)
    }

    /// How many features are pinned: among compatible code objects, the most specific is
    /// built for exactly this configuration and is preferred.
    pub fn specificity(&self) -> u32 {
        u32::from(self.sramecc.is_some()) + u32::from(self.xnack.is_some())
    }

    /// The HSA ISA name form, e.g. `amdgcn-amd-amdhsa--gfx90a:xnack-`.
    pub fn isa_name(&self) -> String {
        format!("amdgcn-amd-amdhsa--{self}")
    }
}

impl fmt::Display for TargetId {
    /// The canonical target id (features in alphabetical order, as clang writes them).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.processor)?;
        let sign = |on: bool| if on { '+' } else { '-' };
        if let Some(on) = self.sramecc {
            write!(f, ":sramecc{}", sign(on))?;
        }
        if let Some(on) = self.xnack {
            write!(f, ":xnack{}", sign(on))?;
        }
        Ok(())
    }
}

impl std::str::FromStr for TargetId {
    type Err = CodeObjectError;
    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

/// Picks, among entries of any type, the one for an agent given its HSA ISA name: the most
/// specific of those that run on the agent ([`TargetId::runs_on`]), ties to the first;
/// `describe` gives an entry's target and whether it holds a code object. With no
/// candidate the error is [`CodeObjectError::NoBinaryForGpu`], naming the agent and every
/// GPU ISA the entries hold.
pub(super) fn select_by<'e, E>(
    entries: &'e [E],
    agent_isa: &str,
    describe: impl Fn(&E) -> (Option<&TargetId>, bool),
) -> Result<&'e E> {
    let agent = TargetId::parse(agent_isa)?;
    let mut best: Option<(&'e E, u32)> = None;
    for entry in entries {
        let (Some(target), true) = describe(entry) else {
            continue;
        };
        if !target.runs_on(&agent) {
            continue;
        }
        let score = target.specificity();
        if best.is_none_or(|(_, s)| score > s) {
            best = Some((entry, score));
        }
    }
    best.map(|(e, _)| e)
        .ok_or_else(|| CodeObjectError::NoBinaryForGpu {
            agent: agent_isa.to_owned(),
            available: entries
                .iter()
                .filter_map(|e| describe(e).0.map(TargetId::isa_name))
                .collect(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_ids_parse_and_print() {
        let t = TargetId::parse("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-").unwrap();
        assert_eq!(
            t,
            TargetId {
                processor: "gfx942".into(),
                sramecc: Some(true),
                xnack: Some(false)
            }
        );
        assert_eq!(t.to_string(), "gfx942:sramecc+:xnack-");
        // clang orders features alphabetically; accept either order on input.
        assert_eq!("gfx942:xnack-:sramecc+".parse::<TargetId>().unwrap(), t);
        let generic = TargetId::parse("amdgcn-amd-amdhsa--gfx9-generic:xnack+").unwrap();
        assert_eq!(generic.processor, "gfx9-generic");
        assert_eq!(generic.isa_name(), "amdgcn-amd-amdhsa--gfx9-generic:xnack+");
        for bad in [
            "",
            "gfx90a:xnack",
            "gfx90a:xnack+:xnack-",
            "gfx90a:tgsplit+",
            ":xnack+",
            "amdgcn-amd",
            "amdgcn-amd-amdpal--gfx1030",
            "gfx 90a",
        ] {
            assert!(
                matches!(
                    TargetId::parse(bad),
                    Err(CodeObjectError::InvalidTargetId(_))
                ),
                "{bad:?} parsed"
            );
        }
    }
}
