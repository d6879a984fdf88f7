//! Where a launched program loads hipshim from: the "lib dir" (libamdhip64.so, its .5/.6/.7
//! sonames, libhiprtc.so.* and libhsasim.so in one directory).
//!
//! The layout is known in one place, `scripts/stage-libs.sh` (scripts/package.sh ships what it
//! stages); this module never builds the directory itself. It is found from this executable's
//! own directory, first match wins:
//! 1. `--lib-dir DIR`;
//! 2. an installed layout: `<exe>/../lib/hipshim` (the release tarball, any prefix) or
//!    `<exe>/../lib/x86_64-linux-gnu/hipshim` (the .deb);
//! 3. a cargo build inside the checkout it was built from (this binary in
//!    `<target>/<profile>/`, next to the cdylibs): stage-libs.sh runs for that profile, which
//!    (re)stages `<target>/<profile>/hipshim-lib` and prints it;
//! 4. a `hipshim-lib` directory beside the executable (a copied cargo build), as it is.
//!
//! Only step 3 touches the repository, and only for a binary that is itself in a target dir:
//! an installed or copied `hipshim` never runs a script.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory name stage-libs.sh creates in the profile dir.
const STAGED_NAME: &str = "hipshim-lib";
/// The repository this binary was built from; its scripts are used while it still exists.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Files a usable lib dir must hold (what `--libpath` and `--preload` rely on).
pub const REQUIRED: &[&str] = &[
    "libamdhip64.so",
    "libamdhip64.so.5",
    "libamdhip64.so.6",
    "libamdhip64.so.7",
    "libhiprtc.so.6",
    "libhiprtc.so.7",
    "libhsasim.so",
];

/// The repository root, if the checkout this binary was built from is still there.
pub fn repo_root() -> Option<PathBuf> {
    let repo = Path::new(REPO);
    repo.join("scripts/stage-libs.sh")
        .is_file()
        .then(|| repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf()))
}

/// The directory holding this executable.
pub fn exe_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate hipshim itself: {e}"))?;
    exe.parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("{} has no parent directory", exe.display()))
}

/// True when `dir` is a cargo profile dir holding a built shim (top level or in deps/).
fn is_cargo_profile_dir(dir: &Path) -> bool {
    dir.join("deps").is_dir()
        && (dir.join("libamdhip64.so").is_file() || dir.join("deps/libamdhip64.so").is_file())
}

/// Lib dirs of an installed hipshim, relative to the directory holding the executable (the
/// runtime linked into this executable finds hsasim there too).
const INSTALLED: [&str; 2] = amdhip64::hsa::INSTALLED_LIB_DIRS;

/// Where the lib dir of a hipshim in `exe_dir` is, before anything is checked or staged.
#[derive(Debug, PartialEq, Eq)]
enum Location {
    /// A directory that is used as it is.
    Dir(PathBuf),
    /// A cargo profile dir of the checkout `repo`: stage-libs.sh makes the lib dir.
    Staged { repo: PathBuf, profile_dir: PathBuf },
}

/// Picks the lib dir for a hipshim in `exe_dir`; `checkout` is the repository it was built
/// from, when that still exists.
fn locate(exe_dir: &Path, checkout: Option<&Path>) -> Location {
    let installed = INSTALLED
        .iter()
        .map(|rel| exe_dir.join(rel))
        .find(|dir| check(dir).is_ok());
    if let Some(dir) = installed {
        return Location::Dir(dir);
    }
    if let (Some(repo), true) = (checkout, is_cargo_profile_dir(exe_dir)) {
        return Location::Staged {
            repo: repo.to_path_buf(),
            profile_dir: exe_dir.to_path_buf(),
        };
    }
    Location::Dir(exe_dir.join(STAGED_NAME))
}

/// Finds (and in a cargo build, stages) the lib dir; `explicit` is `--lib-dir`.
pub fn resolve(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = explicit {
        return check(dir);
    }
    let exe_dir = exe_dir()?;
    match locate(&exe_dir, repo_root().as_deref()) {
        Location::Staged { repo, profile_dir } => check(&stage(&repo, &profile_dir)?),
        Location::Dir(dir) => check(&dir).map_err(|why| {
            format!(
                "{why}\n(hipshim looks for its libraries in {} or {} relative to itself, or a \
                 hipshim-lib directory beside it; pass --lib-dir DIR)",
                INSTALLED[0], INSTALLED[1]
            )
        }),
    }
}

/// Runs `scripts/stage-libs.sh` for the profile dir `profile_dir` and returns what it printed.
fn stage(repo: &Path, profile_dir: &Path) -> Result<PathBuf, String> {
    let (Some(profile), Some(target)) = (profile_dir.file_name(), profile_dir.parent()) else {
        return Err(format!(
            "{} is not a cargo profile dir",
            profile_dir.display()
        ));
    };
    let script = repo.join("scripts/stage-libs.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(profile)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("").trim();
    if last.is_empty() {
        return Err(format!("{} printed no directory", script.display()));
    }
    Ok(PathBuf::from(last))
}

/// `dir` if every required library resolves in it (a dangling symlink counts as missing).
fn check(dir: &Path) -> Result<PathBuf, String> {
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|name| !dir.join(name).is_file())
        .collect();
    if missing.is_empty() {
        Ok(dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()))
    } else {
        Err(format!(
            "{} is not a hipshim lib dir: missing {}",
            dir.display(),
            missing.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fresh empty directory under the system temp dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new() -> Scratch {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "hipshim-libdir-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        /// `rel` (a directory) under the scratch dir, created.
        fn dir(&self, rel: &str) -> PathBuf {
            let dir = self.0.join(rel);
            std::fs::create_dir_all(&dir).unwrap();
            dir
        }

        /// A lib dir at `rel` with every required name present (empty files are enough).
        fn lib_dir(&self, rel: &str) -> PathBuf {
            let dir = self.dir(rel);
            for name in REQUIRED {
                std::fs::write(dir.join(name), b"").unwrap();
            }
            dir
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn tarball_layout_is_found_from_bin() {
        let root = Scratch::new();
        let bin = root.dir("opt/hipshim-0.2.0/bin");
        let lib = root.lib_dir("opt/hipshim-0.2.0/lib/hipshim");
        let Location::Dir(found) = locate(&bin, None) else {
            panic!("an installed layout is never staged")
        };
        assert_eq!(found.canonicalize().unwrap(), lib.canonicalize().unwrap());
    }

    #[test]
    fn debian_multiarch_layout_is_found_from_usr_bin() {
        let root = Scratch::new();
        let bin = root.dir("usr/bin");
        let lib = root.lib_dir("usr/lib/x86_64-linux-gnu/hipshim");
        let Location::Dir(found) = locate(&bin, None) else {
            panic!("an installed layout is never staged")
        };
        assert_eq!(found.canonicalize().unwrap(), lib.canonicalize().unwrap());
    }

    #[test]
    fn an_incomplete_installed_dir_is_passed_over() {
        let root = Scratch::new();
        let bin = root.dir("usr/bin");
        let partial = root.dir("usr/lib/hipshim");
        std::fs::write(partial.join("libamdhip64.so"), b"").unwrap();
        let lib = root.lib_dir("usr/lib/x86_64-linux-gnu/hipshim");
        let Location::Dir(found) = locate(&bin, None) else {
            panic!("an installed layout is never staged")
        };
        assert_eq!(found.canonicalize().unwrap(), lib.canonicalize().unwrap());
        let missing = check(&partial).unwrap_err();
        assert!(missing.contains("libhsasim.so"), "{missing}");
    }

    #[test]
    fn installed_layout_wins_over_a_checkout() {
        let root = Scratch::new();
        let repo = root.dir("repo");
        let bin = root.dir("prefix/bin");
        root.dir("prefix/bin/deps");
        std::fs::write(bin.join("libamdhip64.so"), b"").unwrap();
        root.lib_dir("prefix/lib/hipshim");
        assert!(matches!(locate(&bin, Some(&repo)), Location::Dir(_)));
    }

    #[test]
    fn only_a_cargo_profile_dir_of_a_checkout_is_staged() {
        let root = Scratch::new();
        let repo = root.dir("repo");
        let profile = root.dir("repo/target/release");
        root.dir("repo/target/release/deps");
        std::fs::write(profile.join("libamdhip64.so"), b"").unwrap();
        assert_eq!(
            locate(&profile, Some(&repo)),
            Location::Staged {
                repo: repo.clone(),
                profile_dir: profile.clone()
            }
        );
        // The same build with its checkout gone uses what was staged beside it.
        assert_eq!(
            locate(&profile, None),
            Location::Dir(profile.join(STAGED_NAME))
        );
        // A copied binary (no deps/, no cdylib beside it) never runs the checkout's script.
        let copied = root.dir("elsewhere");
        assert_eq!(
            locate(&copied, Some(&repo)),
            Location::Dir(copied.join(STAGED_NAME))
        );
    }

    #[test]
    fn hipshim_lib_beside_is_the_last_resort() {
        let root = Scratch::new();
        let bin = root.dir("tools");
        let lib = root.lib_dir("tools/hipshim-lib");
        assert_eq!(locate(&bin, None), Location::Dir(lib.clone()));
        assert!(check(&lib).is_ok());
    }
}
