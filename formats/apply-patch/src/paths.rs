//! Paths as a patch names them, joined to the directory of a `cd DIR &&`
//! before `apply_patch` and kept inside the repository.

use agent_apply_sdk::paths::normalize;

/// The repo-relative path `raw` names when the patch runs in `cwd`.
/// `..` may not climb above the repository root, and `cwd` must be relative;
/// an absolute path without a `cd` is left for the host's path policy, which
/// refuses it with its reason.
pub(crate) fn resolve(raw: &str, cwd: Option<&str>) -> Result<String, String> {
    let path = normalize(raw.trim().trim_matches(['`', '"', '\'']));
    if path.is_empty() {
        return Err("the file marker names no path".into());
    }
    let Some(dir) = cwd.map(|d| normalize(d.trim())).filter(|d| !d.is_empty() && d != ".") else {
        return Ok(path);
    };
    if dir.starts_with(['/', '~', '$']) || dir.contains(':') {
        return Err(format!(
            "the patch runs after `cd {dir}`, a directory outside the repository; only relative directories \
             inside it are honoured"
        ));
    }
    if path.starts_with('/') {
        return Ok(path);
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in dir.split('/').chain(path.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(format!(
                        "`{path}` after `cd {dir}` lies outside the repository; nothing outside it can be changed"
                    ));
                }
            }
            other => parts.push(other),
        }
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn cd_is_honoured_inside_the_repository_only() {
        assert_eq!(resolve(" src/a.py ", None).unwrap(), "src/a.py");
        assert_eq!(resolve("./a.py", Some("web")).unwrap(), "web/a.py");
        assert_eq!(resolve("../lib/x.rs", Some("web/app")).unwrap(), "web/lib/x.rs");
        assert!(resolve("../../x", Some("web")).unwrap_err().contains("outside the repository"));
        assert!(resolve("x", Some("/tmp")).unwrap_err().contains("outside the repository"));
        assert!(resolve("", None).is_err());
    }
}
