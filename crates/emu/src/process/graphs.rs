//! The state of ACL graph capture in one process: which streams capture
//! into which model, the models made (their recorded tasks and task
//! groups), the events recorded inside a capture, and the per-thread
//! capture modes the runtime checks synchronous calls against.
//!
//! The rules are the runtime's (docs/graphs.md names each source):
//! * a stream captures into one model; work enqueued on it is recorded,
//!   not run; another stream joins the capture by waiting on an event
//!   recorded inside it, and must be joined back (an event it records
//!   waited on by a capturing stream) before the capture ends (107025);
//! * the capture ends on its origin stream, in the thread that began it
//!   when the mode is not relaxed (107038), and fails with 507903 when the
//!   capture was invalidated;
//! * a synchronous copy or set is refused (107030) when the calling
//!   thread's exchanged mode says so: global captures forbid it in every
//!   thread of the process, thread-local ones in their own thread, relaxed
//!   ones nowhere.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::thread::ThreadId;

use aclmem_core::AclError;

use super::Result;

/// `aclmdlRICaptureMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum CaptureMode {
    /// `ACL_MODEL_RI_CAPTURE_MODE_GLOBAL` (0).
    Global = 0,
    /// `ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL` (1).
    ThreadLocal = 1,
    /// `ACL_MODEL_RI_CAPTURE_MODE_RELAXED` (2).
    Relaxed = 2,
}

impl CaptureMode {
    /// The mode of a raw value; anything else is 107000, as the runtime's
    /// check of the mode answers.
    pub fn from_raw(raw: u32) -> Result<CaptureMode> {
        match raw {
            0 => Ok(CaptureMode::Global),
            1 => Ok(CaptureMode::ThreadLocal),
            2 => Ok(CaptureMode::Relaxed),
            _ => Err(AclError::RT_PARAM_INVALID),
        }
    }
}

/// `aclmdlRICaptureStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum CaptureStatus {
    /// `ACL_MODEL_RI_CAPTURE_STATUS_NONE` (0).
    None = 0,
    /// `ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE` (1).
    Active = 1,
    /// `ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED` (2).
    Invalidated = 2,
}

/// What a replay runs for one recorded task: the work, given the stream
/// the model is executed on.
pub type TaskFn = dyn Fn(u64) -> Result<()> + Send + Sync;

/// One task of a model: its kind and name (for the debug prints), the
/// stream it was enqueued on, and its work.
#[derive(Clone)]
pub struct Task {
    /// The runtime's task type (`MEMCPY_ASYNC`, `KERNEL`, `EVENT_RECORD`).
    pub kind: &'static str,
    /// What it is (`4096 bytes 0x.. -> 0x..`, `Add`, an event's handle).
    pub name: String,
    /// The stream it was enqueued on.
    pub stream: u64,
    /// The work a replay runs.
    pub work: Arc<TaskFn>,
}

impl fmt::Debug for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind, self.name)
    }
}

/// A model made by capture (`aclmdlRI`).
#[derive(Debug, Default)]
pub(crate) struct Model {
    /// Its id (`aclmdlRIGetId`).
    pub(crate) id: u32,
    pub(crate) tasks: Vec<Task>,
    /// Whether a capture into it is still going on.
    pub(crate) capturing: bool,
    /// Task groups: handle → (first task, task count).
    pub(crate) groups: BTreeMap<u64, (usize, usize)>,
    /// The memory its tasks read and write: (address, bytes).
    pub(crate) ranges: Vec<(usize, usize)>,
    /// The device it was captured on.
    pub(crate) device: u32,
    /// The model whose conditional task runs it, for a branch or loop
    /// body made by `aclmdlRIAddCondTask` (the parent owns it).
    pub(crate) parent: Option<u64>,
    /// The condition handles made in it (`aclmdlRICondHandleCreate`).
    pub(crate) conds: Vec<u64>,
}

/// `aclmdlRICondTaskType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum CondKind {
    /// `ACL_MODEL_RI_COND_TYPE_IF` (0): the first body when the value is
    /// not 0, the second (if any) when it is.
    If = 0,
    /// `ACL_MODEL_RI_COND_TYPE_WHILE` (1): the body while the value is
    /// not 0, checked before each pass.
    While = 1,
    /// `ACL_MODEL_RI_COND_TYPE_SWITCH` (2): the body the value indexes;
    /// none when it is out of range.
    Switch = 2,
}

impl CondKind {
    /// The type of a raw value and the body counts the runtime accepts
    /// for it (1 or 2 for IF, 1 for WHILE, at least 1 for SWITCH); 107000
    /// otherwise, as its parameter checks answer.
    pub fn checked(raw: u32, bodies: u32) -> Result<CondKind> {
        let kind = match raw {
            0 => CondKind::If,
            1 => CondKind::While,
            2 => CondKind::Switch,
            _ => return Err(AclError::RT_PARAM_INVALID),
        };
        let fits = match kind {
            CondKind::If => matches!(bodies, 1 | 2),
            CondKind::While => bodies == 1,
            CondKind::Switch => bodies > 0,
        };
        if fits {
            Ok(kind)
        } else {
            Err(AclError::RT_PARAM_INVALID)
        }
    }
}

/// A condition handle (`aclmdlRICondHandle`): a 64-bit value in device
/// memory that a conditional task reads when it runs.
#[derive(Debug, Clone)]
pub(crate) struct Cond {
    /// The model it was made in.
    pub(crate) model: u64,
    /// The value written before every execution of the root model, with
    /// `ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT`; `None` with flag 0.
    pub(crate) default: Option<u64>,
    /// The device address of the value.
    pub(crate) value: usize,
    /// The task it was used for (a handle serves one task) and its bodies.
    pub(crate) task: Option<(CondKind, Vec<u64>)>,
}

/// A stream that captures.
#[derive(Debug, Clone)]
pub(crate) struct Capture {
    pub(crate) model: u64,
    pub(crate) mode: CaptureMode,
    pub(crate) thread: ThreadId,
    /// The stream the capture began on (others joined through events).
    pub(crate) origin: bool,
    pub(crate) invalidated: bool,
    /// A joined stream with work recorded since its last event record.
    pub(crate) unjoined: bool,
    /// An open task group: its first task.
    pub(crate) group: Option<usize>,
}

/// A stream whose enqueued work updates a task group
/// (`aclmdlRICaptureTaskUpdateBegin`).
#[derive(Debug)]
pub(crate) struct Update {
    pub(crate) model: u64,
    pub(crate) group: u64,
    pub(crate) tasks: Vec<Task>,
}

/// The process's graphs.
#[derive(Debug, Default)]
pub(crate) struct Graphs {
    pub(crate) models: BTreeMap<u64, Model>,
    pub(crate) captures: BTreeMap<u64, Capture>,
    pub(crate) updates: BTreeMap<u64, Update>,
    /// Events recorded inside a capture: event → model.
    pub(crate) events: BTreeMap<u64, u64>,
    /// Condition handles, by handle.
    pub(crate) conds: BTreeMap<u64, Cond>,
    next: u64,
}

/// The base of model handles (opaque, never dereferenced).
const MODEL_BASE: u64 = 0x6d6f_0000_0000;
/// The base of task-group handles.
const GROUP_BASE: u64 = 0x6772_0000_0000;
/// The base of condition handles.
const COND_BASE: u64 = 0x636f_0000_0000;

thread_local! {
    /// `aclmdlRICaptureThreadExchangeMode`'s value for this thread
    /// (global until changed, as in the runtime).
    static EXCHANGE: std::cell::Cell<CaptureMode> = const { std::cell::Cell::new(CaptureMode::Global) };
}

/// Sets this thread's exchanged capture mode; the previous one.
pub(crate) fn exchange_mode(mode: CaptureMode) -> CaptureMode {
    EXCHANGE.with(|m| m.replace(mode))
}

impl Graphs {
    fn issue(&mut self, base: u64) -> u64 {
        self.next += 1;
        base + self.next * 0x40
    }

    /// A new model being captured on `device`.
    pub(crate) fn new_model(&mut self, device: u32) -> u64 {
        let handle = self.issue(MODEL_BASE);
        let id = u32::try_from(self.next).unwrap_or(u32::MAX);
        self.models.insert(
            handle,
            Model {
                id,
                capturing: true,
                device,
                ..Model::default()
            },
        );
        handle
    }

    /// A new task-group handle.
    pub(crate) fn new_group(&mut self) -> u64 {
        self.issue(GROUP_BASE)
    }

    /// A new condition handle.
    pub(crate) fn new_cond(&mut self) -> u64 {
        self.issue(COND_BASE)
    }

    /// `model` and every model its conditional tasks run, at any depth.
    pub(crate) fn family(&self, model: u64) -> Vec<u64> {
        let mut out = vec![model];
        let mut i = 0;
        while let Some(&m) = out.get(i) {
            i += 1;
            let Some(m) = self.models.get(&m) else {
                continue;
            };
            for h in &m.conds {
                if let Some((_, bodies)) = self.conds.get(h).and_then(|c| c.task.as_ref()) {
                    out.extend(bodies);
                }
            }
        }
        out
    }

    /// Whether a synchronous call may run in this thread now (the
    /// runtime's capture-mode check; 107030 when not).
    pub(crate) fn permits_sync(&self) -> Result<()> {
        let here = std::thread::current().id();
        let context = self.captures.values().map(|c| c.mode).min();
        let thread = self
            .captures
            .values()
            .filter(|c| c.thread == here)
            .map(|c| c.mode)
            .min();
        let refused = match EXCHANGE.with(|m| m.get()) {
            CaptureMode::Relaxed => false,
            CaptureMode::Global => {
                context == Some(CaptureMode::Global) || thread == Some(CaptureMode::ThreadLocal)
            }
            CaptureMode::ThreadLocal => {
                matches!(thread, Some(CaptureMode::Global | CaptureMode::ThreadLocal))
            }
        };
        if refused {
            Err(AclError::RT_CAPTURE_MODE_NOT_SUPPORT)
        } else {
            Ok(())
        }
    }

    /// Records `task` if `stream` captures or updates a task group: `None`
    /// then; the task back to be run at once otherwise.
    pub(crate) fn record(&mut self, stream: u64, task: Task) -> Option<Task> {
        if let Some(update) = self.updates.get_mut(&stream) {
            update.tasks.push(task);
            return None;
        }
        let capture = self.captures.get_mut(&stream)?;
        capture.unjoined = !capture.origin;
        let model = self.models.get_mut(&capture.model)?;
        model.tasks.push(task);
        None
    }

    /// Marks every stream of `model` invalidated (a task failed while
    /// recorded, as the runtime terminates the capture).
    pub(crate) fn invalidate(&mut self, model: u64) {
        for c in self.captures.values_mut().filter(|c| c.model == model) {
            c.invalidated = true;
        }
    }

    /// The capture of `stream`, if it captures.
    pub(crate) fn capture(&self, stream: u64) -> Option<&Capture> {
        self.captures.get(&stream)
    }
}
