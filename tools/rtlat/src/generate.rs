// SPDX-License-Identifier: GPL-2.0

//! `rtlat generate`: the man pages and the shell completion scripts, made
//! from the same clap definition ([`crate::cli`]) that parses the command
//! line, so that they cannot drift from it. Packagers call it at build time
//! (scripts/package); it is hidden from `--help`.

use std::{fs, io, path::Path};

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::{Cli, Generated};

/// Writes what `what` asks for.
pub fn run(what: &Generated) -> io::Result<()> {
    match what {
        Generated::Man { dir } => man(dir),
        Generated::Completions { shell } => {
            completions(*shell, &mut io::stdout().lock());
            Ok(())
        }
    }
}

/// The man pages of the command line into `dir`.
pub fn man(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
    clap_mangen::generate_to(Cli::command(), dir)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))
}

/// The completion script of `shell` into `out`.
pub fn completions(shell: Shell, out: &mut dyn io::Write) {
    clap_complete::generate(shell, &mut Cli::command(), "rtlat", out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every visible subcommand has its page, and rtlat.1 names them all.
    #[test]
    fn man_pages_of_every_subcommand() {
        let dir = std::env::temp_dir().join(format!("rtlat-man-{}", std::process::id()));
        man(&dir).unwrap();
        let top = fs::read_to_string(dir.join("rtlat.1")).unwrap();
        assert!(
            top.starts_with(".ie"),
            "not a roff page: {}",
            &top[..40.min(top.len())]
        );
        assert!(top.contains(".TH rtlat 1"), "no title line");
        for sub in Cli::command()
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
        {
            let name = sub.get_name();
            assert!(
                dir.join(format!("rtlat-{name}.1")).is_file(),
                "no page for {name}"
            );
            let roff = format!("rtlat\\-{}(1)", name.replace('-', "\\-"));
            assert!(top.contains(&roff), "rtlat.1 does not name {name}");
        }
        assert!(
            !dir.join("rtlat-generate.1").exists(),
            "a hidden subcommand got a page"
        );
        let run = fs::read_to_string(dir.join("rtlat-run.1")).unwrap();
        assert!(
            run.contains("\\-\\-duration"),
            "rtlat-run.1 lacks --duration"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Each shell's script completes the subcommands and their options.
    #[test]
    fn completions_name_subcommands_and_options() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let mut out = Vec::new();
            completions(shell, &mut out);
            let s = String::from_utf8(out).unwrap();
            for word in ["check-json", "cyclictest", "duration"] {
                assert!(s.contains(word), "{shell}: no '{word}'");
            }
        }
    }

    /// A directory that cannot be made is an error naming it, not a panic.
    #[test]
    fn man_into_a_file_is_an_error() {
        let err = man(Path::new("/proc/version/man")).unwrap_err();
        assert!(err.to_string().contains("/proc/version/man"), "{err}");
    }
}
