//! Paths a model got slightly wrong: `path/to/sample.txt` for the
//! repository's `sample.txt`, or `app.py` for `src/app.py`. A missing path
//! that ends like exactly one tracked file (or that the tracked file ends
//! like, at a `/`) means that file: the edit applies to it and the report
//! says so, instead of a new stray file beside the real one.

use agent_apply_sdk::types::{Change, Diagnostic, File};

/// A path the reply named and the tracked file it stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct Alias {
    pub named: String,
    pub real: String,
}

/// Whether one path is the other with leading directories added.
fn same_tail(a: &str, b: &str) -> bool {
    let (long, short) = if a.len() > b.len() { (a, b) } else { (b, a) };
    long.len() > short.len() && long.ends_with(short) && long.as_bytes()[long.len() - short.len() - 1] == b'/'
}

/// The paths of the index: what the repository tracks. Read only when a
/// reply names a missing path. An unreadable index means no guesses.
pub fn tracked(repo: &git2::Repository) -> Vec<String> {
    let Ok(index) = repo.index() else { return Vec::new() };
    index.iter().filter_map(|entry| String::from_utf8(entry.path).ok()).collect()
}

/// For each `missing` path, the tracked files it can mean; an alias when
/// there is exactly one, and a note either way.
pub fn resolve<'t>(
    missing: &[String],
    tracked: impl Iterator<Item = &'t str> + Clone,
) -> (Vec<Alias>, Vec<Diagnostic>) {
    let mut aliases = Vec::new();
    let mut notes = Vec::new();
    for named in missing {
        let near: Vec<&str> = tracked.clone().filter(|t| same_tail(named, t)).take(4).collect();
        match near.as_slice() {
            [] => {}
            [real] => {
                notes.push(
                    Diagnostic::warning(
                        format!(
                            "{named} does not exist; its edit was applied to {real}, the one tracked file it can mean"
                        ),
                        None,
                    )
                    .with_hint(format!("name files by their path from the repository root ({real})")),
                );
                aliases.push(Alias { named: named.clone(), real: real.to_string() });
            }
            several => notes.push(
                Diagnostic::warning(
                    format!("{named} does not exist and would be created; did you mean {}?", several.join(" or ")),
                    None,
                )
                .with_hint("name files by their path from the repository root"),
            ),
        }
    }
    (aliases, notes)
}

/// The files a plugin is given: the snapshots, plus each alias's real file
/// under the name the reply used, so every format applies to it unchanged.
pub fn plugin_files(snapshots: &[File], aliases: &[Alias]) -> Vec<File> {
    let mut files = snapshots.to_vec();
    for alias in aliases {
        if let Some(real) = snapshots.iter().find(|f| f.path == alias.real) {
            files.push(File::new(alias.named.clone(), real.content.clone()));
        }
    }
    files
}

/// `changes` with each named path turned back into its real file.
pub fn real_changes(changes: Vec<Change>, aliases: &[Alias]) -> Vec<Change> {
    let real = |path: String| aliases.iter().find(|a| a.named == path).map_or(path, |a| a.real.clone());
    changes
        .into_iter()
        .map(|change| match change {
            Change::Write(file) => Change::Write(File { path: real(file.path), ..file }),
            Change::Delete(path) => Change::Delete(real(path)),
            Change::Rename(r) => Change::Rename(agent_apply_sdk::types::Renamed { from: real(r.from), ..r }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_path_means_the_one_tracked_file_with_its_tail() {
        let tracked = ["sample.txt", "src/app.py", "tests/app.py", "lib/util.rs"];
        let missing =
            ["path/to/sample.txt".to_string(), "app.py".to_string(), "util.rs".to_string(), "new.rs".to_string()];
        let (aliases, notes) = resolve(&missing, tracked.iter().copied());
        assert_eq!(
            aliases,
            [
                Alias { named: "path/to/sample.txt".into(), real: "sample.txt".into() },
                Alias { named: "util.rs".into(), real: "lib/util.rs".into() }
            ]
        );
        assert!(notes[1].message.contains("did you mean src/app.py or tests/app.py"), "{}", notes[1].message);
        assert!(!same_tail("xsample.txt", "sample.txt"));
        let changes = real_changes(vec![Change::Write(File::new("util.rs", "x"))], &aliases);
        assert_eq!(changes[0].path(), "lib/util.rs");
    }
}
