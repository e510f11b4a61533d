//! [`Workspace`]: a directory opened for work — the repository around it
//! (if any), its config, and the formats that config makes available.
//! Every entry point starts from one; a long-lived caller (the MCP server)
//! keeps it, and with it the loaded format components.

use std::path::{Path, PathBuf};

use crate::Error;
use crate::config::Config;
use crate::registry::Registry;
use crate::runtime::{ComponentCache, ExitReporter, Runtime};
use crate::transaction::GitRepo;

pub struct Workspace {
    /// The repository's working tree, or the opened directory outside one.
    pub root: PathBuf,
    /// The repository around the start directory, opened once for a run.
    repository: Option<git2::Repository>,
    pub config: Config,
    pub registry: Registry,
}

impl Workspace {
    /// Open `start` (a directory in or outside a repository): load the
    /// config (user's, then the repository's) and the formats.
    pub fn open(start: &Path) -> Result<Self, Error> {
        Self::open_with(start, None)
    }

    /// The same, for a run that ends when a plugin call runs past its time
    /// limit, writing what `reporter` makes of the timeout error (see
    /// [`Runtime::ending_at_timeout`]): the plugins run faster, without time
    /// checks. Only for a one-shot process, such as the CLI's, that writes
    /// nothing while plugins run; the pipeline ends their calls before it writes.
    pub fn open_ending_at_timeout(start: &Path, reporter: Box<ExitReporter>) -> Result<Self, Error> {
        Self::open_with(start, Some(reporter))
    }

    fn open_with(start: &Path, reporter: Option<Box<ExitReporter>>) -> Result<Self, Error> {
        if !start.is_dir() {
            return Err(Error::NotADirectory(start.to_path_buf()));
        }
        // Outside a repository (or in a bare one) the root is `start` itself:
        // formats, parse and read work anywhere.
        let repository = crate::transaction::discover_repository(start).ok();
        let root = repository.as_ref().and_then(|r| r.workdir()).map_or_else(|| start.to_path_buf(), Path::to_path_buf);
        let config = Config::load(Some(&root))?;
        let (cache, limits) = (ComponentCache::default_location(), config.limits());
        let runtime = match reporter {
            Some(reporter) => Runtime::ending_at_timeout(cache, limits, reporter),
            None => Runtime::new(cache, limits),
        }?;
        let registry = Registry::new(runtime, &config)?;
        Ok(Workspace { root, repository, config, registry })
    }

    /// The repository, for the transaction (an error outside one), with the
    /// config's protected paths. The first call takes the handle `open`
    /// made; later ones open the repository afresh, so a long-lived
    /// workspace sees what other processes did to it in between.
    pub fn git_repo(&mut self) -> Result<GitRepo, Error> {
        let mut repo = match self.repository.take() {
            Some(repository) => GitRepo::open(repository),
            None => GitRepo::discover(&self.root),
        }?;
        repo.protect(&self.config.protected, &self.config.allow_protected).map_err(Error::Protected)?;
        Ok(repo)
    }
}
