//! The wasm runtime: one engine, components compiled once and cached on
//! disk, and every plugin call sandboxed (no files, network or environment),
//! under a deadline and a memory cap.

mod cache;
mod clock;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod code_memory;
mod convert;
#[cfg(test)]
mod core_wasm;
mod deadline;
mod engine;
mod linker;
#[cfg(target_os = "linux")]
mod memory;
mod native;
mod precompiled;
mod shared;

use std::borrow::Borrow;
use std::time::{Duration, Instant};

use agent_apply_sdk::types as sdk;
use wasmtime::component::{Component, InstancePre, ResourceTable};
use wasmtime::{Engine, ResourceLimiter, Store, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

pub use cache::{ComponentCache, InfoSummary};
pub use clock::ExitReporter;
pub use deadline::ExitReport;
pub use engine::Stop;
pub use native::NativePlugin;

mod bindings {
    wasmtime::component::bindgen!({
        path: "../plugins-sdk/wit/since_v0.1.0",
        world: "format",
        // Arguments are lowered from borrowed views: the files passed to
        // `apply` can be megabytes, and an owned copy of each would cost
        // more than lowering them does.
        ownership: Borrowing { duplicate_if_necessary: true },
    });
}

/// Contract 0.2's one new interface, `kept-edits`, over 0.1's types. Its
/// world's `plugin` export is 0.1's, which `bindings` already calls.
mod kept_bindings {
    wasmtime::component::bindgen!({
        path: ["../plugins-sdk/wit/since_v0.1.0", "../plugins-sdk/wit/since_v0.2.0"],
        world: "agent-apply:format/format@0.2.0",
        ownership: Borrowing { duplicate_if_necessary: true },
        with: { "agent-apply:format/types@0.1.0": super::bindings::agent_apply::format::types },
    });
}

use bindings::{Format as FormatWorld, FormatIndices};
use clock::Clock;
use kept_bindings::exports::agent_apply::format0_2_0::kept_edits::{
    Guest as KeptEdits, GuestIndices as KeptEditsIndices,
};

/// How much a plugin may write to stdout and stderr before the rest is dropped.
const CAPTURE_BYTES: usize = 64 * 1024;

/// Resource limits for each plugin call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall time one call may take.
    pub timeout: Duration,
    /// Linear memory an instance may grow to, in bytes.
    pub memory_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { timeout: Duration::from_secs(5), memory_bytes: 256 << 20 }
    }
}

/// Why a plugin could not be loaded or a call failed. Each names the plugin.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PluginError {
    #[error("plugin '{plugin}' could not be loaded: {reason}")]
    Load { plugin: String, reason: String },
    #[error("plugin '{plugin}' does not implement the agent-apply:format@{expected} contract: {reason}")]
    Contract { plugin: String, expected: &'static str, reason: String },
    #[error(
        "plugin '{plugin}' implements contract agent-apply:format@{found}, but this host supports agent-apply:format@{supported}"
    )]
    ContractVersion { plugin: String, found: String, supported: &'static str },
    #[error(
        "native plugin '{plugin}' was built for native ABI version {found} (table of {found_size} bytes), but this host supports version {supported}"
    )]
    NativeAbi { plugin: String, found: u32, found_size: u32, supported: u32 },
    #[error("plugin '{plugin}' ran past its time limit of {} ms in `{call}` and was stopped", limit.as_millis())]
    Timeout { plugin: String, call: &'static str, limit: Duration },
    #[error("plugin '{plugin}' tried to use more than its memory limit of {} MiB in `{call}` and was stopped", limit >> 20)]
    OutOfMemory { plugin: String, call: &'static str, limit: usize },
    #[error("plugin '{plugin}' crashed in `{call}`: {reason}")]
    Trap { plugin: String, call: &'static str, reason: String, stderr: String },
    #[error("plugin '{plugin}' was asked to instantiate again after a crash")]
    Poisoned { plugin: String },
    #[error("plugin '{plugin}' was not called for `{call}`: {reason}")]
    NotCalled { plugin: String, call: &'static str, reason: &'static str },
}

impl PluginError {
    /// What the plugin wrote to stderr before failing, if anything.
    pub fn stderr(&self) -> Option<&str> {
        match self {
            PluginError::Trap { stderr, .. } if !stderr.is_empty() => Some(stderr),
            _ => None,
        }
    }
}

/// Store state: the WASI context with nothing granted, and the memory cap.
struct PluginState {
    wasi: WasiCtx,
    table: ResourceTable,
    memory: MemoryCap,
    /// When the call under way must end.
    deadline: Option<Instant>,
}

impl deadline::HasDeadline for PluginState {
    fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// Refuses memory growth past the limit, and remembers that it did, so the
/// trap that follows can be reported as what it is.
struct MemoryCap {
    limit: usize,
    exceeded: bool,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(&mut self, _current: usize, desired: usize, _max: Option<usize>) -> wasmtime::Result<bool> {
        let allowed = desired <= self.limit;
        self.exceeded |= !allowed;
        Ok(allowed)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _max: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

/// A clock frozen at zero: plugins are pure functions and get no time.
struct FrozenClock;

impl HostWallClock for FrozenClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for FrozenClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// The engine, linkers and component cache shared by every plugin of a run.
#[derive(Clone)]
pub struct Runtime {
    /// The process's engine for this way of stopping, and its linkers
    /// (made on first use: a run that loads no plugin, `formats` from the
    /// cache or `prompt`, never pays for linking WASI).
    shared: &'static shared::Shared,
    cache: ComponentCache,
    limits: Limits,
    clock: Clock,
}

impl Runtime {
    /// A runtime with the given cache and limits. Each call's deadline is
    /// kept by a timer of the calling thread (see [`deadline`]), and a call
    /// past it traps: the process goes on.
    pub fn new(cache: ComponentCache, limits: Limits) -> Result<Self, PluginError> {
        Self::with_clock(cache, limits, Clock::new(None))
    }

    /// A runtime for a run that ends when a plugin call runs past its time
    /// limit, writing what `reporter` makes of the timeout error. Its engine
    /// has no epoch checks in the plugins' code (a fifth of a large reply's
    /// instructions). Only for a process that writes nothing while a plugin
    /// runs, and that calls [`Runtime::end_calls`] before it writes. Where a
    /// thread's timer cannot be had (not Linux) calls trap, as with [`Runtime::new`].
    pub fn ending_at_timeout(
        cache: ComponentCache,
        limits: Limits,
        reporter: Box<ExitReporter>,
    ) -> Result<Self, PluginError> {
        match cfg!(target_os = "linux") {
            true => Self::with_clock(cache, limits, Clock::new(Some(reporter))),
            false => Self::new(cache, limits),
        }
    }

    fn with_clock(cache: ComponentCache, limits: Limits, clock: Clock) -> Result<Self, PluginError> {
        Ok(Runtime { shared: shared::for_stop(clock.stop())?, cache, limits, clock })
    }

    /// How this runtime's engine stops a call past its time limit.
    pub fn stop(&self) -> Stop {
        self.clock.stop()
    }

    /// Refuse every plugin call from now on, where a call that runs out of
    /// time would end the process ([`Runtime::ending_at_timeout`]): the run
    /// is about to write. Elsewhere this does nothing.
    pub fn end_calls(&self) {
        self.clock.end_calls();
    }

    /// The limits calls run under.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Where compiled components (and what plugins said of themselves) are kept.
    pub fn cache(&self) -> &ComponentCache {
        &self.cache
    }

    /// The engine (for benchmarks and cache tools).
    pub fn engine(&self) -> &Engine {
        &self.shared.engine
    }

    /// Compile (or fetch from the cache) and link a plugin's component.
    /// `digest` is the hex sha256 of `wasm`.
    pub fn load(&self, name: &str, wasm: &[u8], digest: &str) -> Result<LoadedPlugin, PluginError> {
        let component = self
            .cache
            .component(&self.shared.engine, self.stop(), wasm, digest)
            .map_err(|reason| PluginError::Load { plugin: name.to_string(), reason })?;
        self.link(name, component)
    }

    /// Link a built-in format: its machine code from the binary when it
    /// fits this engine (run in place where the engine can publish it so),
    /// else compiled as [`Runtime::load`] does.
    pub fn load_builtin(
        &self,
        name: &str,
        wasm: &[u8],
        digest: &str,
        precompiled: Option<&'static [u8]>,
    ) -> Result<LoadedPlugin, PluginError> {
        let embedded = match precompiled {
            #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
            Some(code) => precompiled::Embedded::InPlace(code),
            #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
            Some(code) => precompiled::Embedded::ViaCache(code),
            None => precompiled::Embedded::Missing,
        };
        let component =
            precompiled::builtin_component(&self.shared.engine, self.stop(), &self.cache, name, wasm, digest, embedded)
                .map_err(|reason| PluginError::Load { plugin: name.to_string(), reason })?;
        self.link(name, component)
    }

    fn link(&self, name: &str, component: Component) -> Result<LoadedPlugin, PluginError> {
        let refuse = |error: wasmtime::Error| {
            // A plugin built against another contract version exports the
            // same interface under another version: name both.
            let versions = contract_versions(&self.shared.engine, &component);
            match versions.into_iter().find(|v| v != agent_apply_sdk::CONTRACT_VERSION) {
                Some(found) => PluginError::ContractVersion {
                    plugin: name.to_string(),
                    found,
                    supported: agent_apply_sdk::CONTRACT_VERSION,
                },
                None => PluginError::Contract {
                    plugin: name.to_string(),
                    expected: agent_apply_sdk::CONTRACT_VERSION,
                    reason: format!("{error:#}"),
                },
            }
        };
        let linker = self.shared.linkers.for_component(&self.shared.engine, &component);
        let pre = linker.instantiate_pre(&component).map_err(refuse)?;
        let indices = FormatIndices::new(&pre).map_err(refuse)?;
        // Contract 0.2's `kept-edits`, where the plugin exports it.
        let kept_edits = KeptEditsIndices::new(&pre).ok();
        Ok(LoadedPlugin { name: name.to_string(), pre, indices, kept_edits, runtime: self.clone() })
    }
}

/// A compiled, linked plugin, ready to instantiate.
#[derive(Clone)]
pub struct LoadedPlugin {
    name: String,
    pre: InstancePre<PluginState>,
    indices: FormatIndices,
    kept_edits: Option<KeptEditsIndices>,
    runtime: Runtime,
}

impl LoadedPlugin {
    /// The name the plugin was loaded under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A fresh sandboxed instance.
    pub fn instantiate(&self) -> Result<PluginInstance, PluginError> {
        self.instantiate_wasm().map(PluginInstance::Wasm)
    }

    fn instantiate_wasm(&self) -> Result<WasmInstance, PluginError> {
        let limits = self.runtime.limits;
        let stderr = MemoryOutputPipe::new(CAPTURE_BYTES);
        let wasi = WasiCtxBuilder::new()
            .stdout(MemoryOutputPipe::new(CAPTURE_BYTES))
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .socket_addr_check(|_, _| Box::pin(async { false }))
            .wall_clock(FrozenClock)
            .monotonic_clock(FrozenClock)
            .build();
        let state = PluginState {
            wasi,
            table: ResourceTable::new(),
            memory: MemoryCap { limit: limits.memory_bytes, exceeded: false },
            deadline: None,
        };
        let mut store = Store::new(&self.runtime.shared.engine, state);
        store.limiter(|state| &mut state.memory);
        self.runtime.clock.watch(&mut store);
        let armed = self.runtime.clock.arm(&mut store, &self.name, "instantiate", limits.timeout)?;
        let instantiated = self.pre.instantiate(&mut store).and_then(|instance| {
            let bindings = self.indices.load(&mut store, &instance)?;
            let kept_edits = self.kept_edits.as_ref().map(|kept| kept.load(&mut store, &instance)).transpose()?;
            Ok((bindings, kept_edits))
        });
        drop(armed);
        let (bindings, kept_edits) =
            instantiated.map_err(|e| classify(&self.name, "instantiate", e, &store, &stderr, limits.timeout))?;
        Ok(WasmInstance {
            name: self.name.clone(),
            store,
            bindings,
            kept_edits,
            parses: 0,
            kept_parse: None,
            kept_by_index: false,
            stderr,
            timeout: limits.timeout,
            poisoned: false,
            clock: self.runtime.clock.clone(),
        })
    }
}

/// The exported interface every format plugin has, without its version.
const PLUGIN_INTERFACE: &str = "agent-apply:format/plugin@";

/// The contract versions whose `plugin` interface `component` exports.
fn contract_versions(engine: &Engine, component: &Component) -> Vec<String> {
    component
        .component_type()
        .exports(engine)
        .filter_map(|(name, _)| name.strip_prefix(PLUGIN_INTERFACE).map(str::to_string))
        .collect()
}

fn classify(
    plugin: &str,
    call: &'static str,
    error: wasmtime::Error,
    store: &Store<PluginState>,
    stderr: &MemoryOutputPipe,
    timeout: Duration,
) -> PluginError {
    let plugin = plugin.to_string();
    let limits = store.data().memory.limit;
    if error.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
        return PluginError::Timeout { plugin, call, limit: timeout };
    }
    if store.data().memory.exceeded {
        return PluginError::OutOfMemory { plugin, call, limit: limits };
    }
    let stderr = String::from_utf8_lossy(&stderr.contents()).trim().to_string();
    let reason = match error.downcast_ref::<Trap>() {
        Some(trap) => match stderr.lines().find(|l| l.contains("panicked at")) {
            Some(_) => format!("{trap} (it panicked; see its output below)"),
            None => trap.to_string(),
        },
        None => format!("{error:#}"),
    };
    PluginError::Trap { plugin, call, reason, stderr }
}

/// Which `parse` of an instance a list of edits came from: `apply` may then
/// give them back by index (contract 0.2's `apply-kept`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseId(u64);

/// A running wasm plugin instance. Calls run one at a time under the
/// deadline; after a crash the instance refuses further calls.
pub struct WasmInstance {
    name: String,
    store: Store<PluginState>,
    bindings: FormatWorld,
    /// Contract 0.2's `kept-edits`, where the plugin exports it.
    kept_edits: Option<KeptEdits>,
    /// How many `parse` calls this instance has had.
    parses: u64,
    /// The number of the latest `parse`, when it was asked to keep its
    /// edits (the `keep-payloads` option).
    kept_parse: Option<ParseId>,
    /// Whether that parse was asked to keep them for `apply-kept` alone
    /// (`keep-payloads = by-index`): their payloads are then empty.
    kept_by_index: bool,
    stderr: MemoryOutputPipe,
    timeout: Duration,
    poisoned: bool,
    clock: Clock,
}

macro_rules! guarded_call {
    ($self:ident, $call:literal, |$guest:ident, $store:ident| $body:expr) => {{
        if $self.poisoned {
            return Err(PluginError::Poisoned { plugin: $self.name.clone() });
        }
        let timeout = $self.timeout;
        let armed = $self.clock.arm(&mut $self.store, &$self.name, $call, timeout)?;
        let $guest = $self.bindings.agent_apply_format_plugin();
        let $store = &mut $self.store;
        let result = $body;
        drop(armed);
        match result {
            Ok(value) => Ok(value),
            Err(error) => {
                $self.poisoned = true;
                Err(classify(&$self.name, $call, error, &$self.store, &$self.stderr, timeout))
            }
        }
    }};
}

impl WasmInstance {
    pub fn info(&mut self) -> Result<sdk::FormatInfo, PluginError> {
        guarded_call!(self, "info", |guest, store| guest.call_info(store).map(convert::format_info))
    }

    pub fn detect(&mut self, reply: &str) -> Result<f32, PluginError> {
        guarded_call!(self, "detect", |guest, store| guest.call_detect(store, reply))
    }

    pub fn parse(&mut self, reply: &str, options: &[sdk::OptionValue]) -> Result<sdk::ParseOutput, PluginError> {
        self.parses += 1;
        let keeping = options.iter().find(|o| o.key == agent_apply_sdk::KEEP_PAYLOADS).map(|o| o.value.as_str());
        self.kept_by_index = keeping == Some(agent_apply_sdk::KEEP_BY_INDEX);
        self.kept_parse = (self.kept_by_index || keeping == Some("on")).then_some(ParseId(self.parses));
        let options = convert::options(options);
        guarded_call!(self, "parse", |guest, store| guest.call_parse(store, reply, &options).map(convert::parse_output))
    }

    pub fn apply<E: Borrow<sdk::Edit>>(
        &mut self,
        files: &[sdk::File],
        edits: &[E],
        options: &[sdk::OptionValue],
    ) -> Result<Result<sdk::ApplyOutput, String>, PluginError> {
        let files: Vec<_> = files.iter().map(convert::file_to_host).collect();
        let related: Vec<Vec<&str>> =
            edits.iter().map(|e| e.borrow().related_paths.iter().map(String::as_str).collect()).collect();
        let edits: Vec<_> =
            edits.iter().zip(&related).map(|(edit, related)| convert::edit_to_host(edit.borrow(), related)).collect();
        let options = convert::options(options);
        guarded_call!(self, "apply", |guest, store| guest
            .call_apply(store, &files, &edits, &options)
            .map(|r| r.map(convert::apply_output)))
    }

    /// `apply-kept` of the edits at `indexes` of the output of parse
    /// `parse`; `None` when the plugin cannot take them so (it exports no
    /// `kept-edits`, or that parse is not the latest, or kept nothing).
    fn apply_kept(
        &mut self,
        files: &[sdk::File],
        parse: ParseId,
        indexes: &[u32],
        options: &[sdk::OptionValue],
    ) -> Option<Result<Result<sdk::ApplyOutput, String>, PluginError>> {
        if self.kept_parse != Some(parse) {
            return None;
        }
        let kept_edits = self.kept_edits.clone()?;
        Some(self.call_apply_kept(&kept_edits, files, indexes, options))
    }

    fn call_apply_kept(
        &mut self,
        kept_edits: &KeptEdits,
        files: &[sdk::File],
        indexes: &[u32],
        options: &[sdk::OptionValue],
    ) -> Result<Result<sdk::ApplyOutput, String>, PluginError> {
        let files: Vec<_> = files.iter().map(convert::file_to_host).collect();
        let options = convert::options(options);
        guarded_call!(self, "apply-kept", |_guest, store| kept_edits
            .call_apply_kept(store, &files, indexes, &options)
            .map(|r| r.map(convert::apply_output)))
    }

    pub fn render(
        &mut self,
        file: &sdk::File,
        ranges: &[sdk::LineRange],
        options: &[sdk::OptionValue],
    ) -> Result<Result<String, String>, PluginError> {
        let file = convert::file_to_host(file);
        let ranges: Vec<_> = ranges.iter().map(|r| convert::line_range_to_host(*r)).collect();
        let options = convert::options(options);
        guarded_call!(self, "render", |guest, store| guest.call_render(store, file, &ranges, &options))
    }

    pub fn lint(&mut self, file: &sdk::File) -> Result<Vec<sdk::Diagnostic>, PluginError> {
        let file = convert::file_to_host(file);
        guarded_call!(self, "lint", |guest, store| guest
            .call_lint(store, file)
            .map(|d| d.into_iter().map(convert::diagnostic).collect()))
    }
}

/// A plugin ready for calls: a sandboxed wasm instance, or a trusted native
/// library. The rest of the host sees only this.
#[expect(
    clippy::large_enum_variant,
    reason = "nearly every plugin is wasm: boxing that variant would cost each instance an allocation to shrink the rare native one"
)]
pub enum PluginInstance {
    /// A wasm component instance (sandboxed, limited).
    Wasm(WasmInstance),
    /// A native library (`native = true`: full privileges, no limits).
    Native(NativePlugin),
}

impl PluginInstance {
    /// The name the plugin was loaded under.
    pub fn name(&self) -> &str {
        match self {
            PluginInstance::Wasm(wasm) => &wasm.name,
            PluginInstance::Native(native) => native.name(),
        }
    }

    /// How long one call may run (a native plugin is not limited).
    pub fn timeout(&self) -> Option<Duration> {
        match self {
            PluginInstance::Wasm(wasm) => Some(wasm.timeout),
            PluginInstance::Native(_) => None,
        }
    }

    /// What the plugin wrote to stderr so far (shown with `--verbose`); a
    /// native plugin writes to the host's own stderr instead.
    pub fn stderr(&self) -> String {
        match self {
            PluginInstance::Wasm(wasm) => String::from_utf8_lossy(&wasm.stderr.contents()).into_owned(),
            PluginInstance::Native(_) => String::new(),
        }
    }

    pub fn info(&mut self) -> Result<sdk::FormatInfo, PluginError> {
        match self {
            PluginInstance::Wasm(wasm) => wasm.info(),
            PluginInstance::Native(native) => native.info(),
        }
    }

    pub fn detect(&mut self, reply: &str) -> Result<f32, PluginError> {
        match self {
            PluginInstance::Wasm(wasm) => wasm.detect(reply),
            PluginInstance::Native(native) => native.detect(reply),
        }
    }

    pub fn parse(&mut self, reply: &str, options: &[sdk::OptionValue]) -> Result<sdk::ParseOutput, PluginError> {
        match self {
            PluginInstance::Wasm(wasm) => wasm.parse(reply, options),
            PluginInstance::Native(native) => native.parse(reply, options),
        }
    }

    pub fn apply<E: Borrow<sdk::Edit>>(
        &mut self,
        files: &[sdk::File],
        edits: &[E],
        options: &[sdk::OptionValue],
    ) -> Result<Result<sdk::ApplyOutput, String>, PluginError> {
        match self {
            PluginInstance::Wasm(wasm) => wasm.apply(files, edits, options),
            PluginInstance::Native(native) => native.apply(files, edits, options),
        }
    }

    /// The latest `parse` of this instance, when it kept its edits for
    /// [`PluginInstance::apply_parsed`] (a native plugin keeps none).
    pub fn latest_parse(&self) -> Option<ParseId> {
        match self {
            PluginInstance::Wasm(wasm) => wasm.kept_parse,
            PluginInstance::Native(_) => None,
        }
    }

    /// [`PluginInstance::apply`] of `edits`, which are those at `indexes`
    /// of the output of `parse` (a [`PluginInstance::latest_parse`]): given
    /// back by index where the plugin kept them (contract 0.2), else by
    /// `apply`. A plugin that refuses them by index gets them by `apply`,
    /// unless their parse kept them for `apply-kept` alone.
    pub fn apply_parsed<E: Borrow<sdk::Edit>>(
        &mut self,
        files: &[sdk::File],
        edits: &[E],
        parsed: Option<(ParseId, &[u32])>,
        options: &[sdk::OptionValue],
    ) -> Result<Result<sdk::ApplyOutput, String>, PluginError> {
        // After a by-index parse the payloads are empty: a refusal stands.
        let by_index = matches!(self, PluginInstance::Wasm(wasm) if wasm.kept_by_index);
        if let Some((parse, indexes)) = parsed
            && let Some(applied) = self.apply_kept(files, parse, indexes, options)
            && (by_index || !matches!(applied, Ok(Err(_))))
        {
            return applied;
        }
        self.apply(files, edits, options)
    }

    /// Whether the plugin exports contract 0.2's `kept-edits`: a parse may
    /// then keep its edits for `apply-kept` alone
    /// ([`agent_apply_sdk::KEEP_BY_INDEX`]).
    pub fn applies_kept_edits(&self) -> bool {
        matches!(self, PluginInstance::Wasm(wasm) if wasm.kept_edits.is_some())
    }

    /// Contract 0.2's `apply-kept` of the edits at `indexes` of the output
    /// of `parse`; `None` when the plugin cannot be asked (it exports no
    /// `kept-edits`, or `parse` is not its latest or kept nothing).
    pub fn apply_kept(
        &mut self,
        files: &[sdk::File],
        parse: ParseId,
        indexes: &[u32],
        options: &[sdk::OptionValue],
    ) -> Option<Result<Result<sdk::ApplyOutput, String>, PluginError>> {
        match self {
            PluginInstance::Wasm(wasm) => wasm.apply_kept(files, parse, indexes, options),
            PluginInstance::Native(_) => None,
        }
    }

    pub fn render(
        &mut self,
        file: &sdk::File,
        ranges: &[sdk::LineRange],
        options: &[sdk::OptionValue],
    ) -> Result<Result<String, String>, PluginError> {
        match self {
            PluginInstance::Wasm(wasm) => wasm.render(file, ranges, options),
            PluginInstance::Native(native) => native.render(file, ranges, options),
        }
    }

    pub fn lint(&mut self, file: &sdk::File) -> Result<Vec<sdk::Diagnostic>, PluginError> {
        match self {
            PluginInstance::Wasm(wasm) => wasm.lint(file),
            PluginInstance::Native(native) => native.lint(file),
        }
    }
}
