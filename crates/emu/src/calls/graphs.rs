//! ACL graphs (`aclmdlRI*`): capture of a stream's work into a model,
//! replay, task groups and their update, and the checks the runtime makes
//! of other calls while a stream captures. The state and its rules are in
//! `process::graphs`; docs/graphs.md describes them with their sources.
//!
//! A task is recorded by the C library, which knows what the work is (a
//! copy, a set, an operator, a host function); the engine keeps it, in
//! enqueue order across every stream of the capture, and a replay runs the
//! tasks in that order, outside every lock of the process, so a task may
//! call the emulator again.

use std::sync::Arc;

use aclmem_core::AclError;

use crate::process::Result;
use crate::process::graphs::{
    Capture, CaptureMode, CaptureStatus, Graphs, Task, TaskFn, Update, exchange_mode,
};
use crate::{Emulator, Op};

impl Emulator {
    fn graphs<R>(&self, f: impl FnOnce(&mut Graphs) -> Result<R>) -> Result<R> {
        self.process.enter(Op::Stream)?;
        f(&mut self.process.graphs.lock())
    }

    /// A live, non-default stream (107000 for the default stream, which
    /// cannot capture; the stream's own error when it is not live).
    ///
    /// Capture exists on the products CANN 9.0's reference lists for it
    /// (Atlas 350, A3, A2, the inference series); 8.5's listed every
    /// product, 9.0's leaves out the Atlas 200I/500 A2 and the training
    /// series: there, the conservative answer, 207000 (docs/graphs.md).
    fn capture_stream(&self, stream: u64) -> Result<u32> {
        if matches!(
            self.product(),
            aclmem_core::Product::Atlas200IA2 | aclmem_core::Product::AtlasTraining
        ) {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        if stream == 0 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        self.check_stream(stream)?;
        self.stream_device(stream).ok_or(AclError::RT_PARAM_INVALID)
    }

    /// `aclmdlRICaptureBegin(stream, mode)`: `stream`'s work from now on
    /// is recorded into a new model.
    pub fn capture_begin(&self, stream: u64, mode: u32) -> Result<()> {
        let mode = CaptureMode::from_raw(mode)?;
        let device = self.capture_stream(stream)?;
        self.graphs(|g| {
            if g.captures.contains_key(&stream) || g.updates.contains_key(&stream) {
                return Err(AclError::RT_STREAM_CAPTURED);
            }
            let model = g.new_model(device);
            g.captures.insert(stream, origin(model, mode));
            Ok(())
        })
    }

    /// `aclmdlRICaptureToModelRIBegin(stream, model, mode)`: `stream`'s
    /// work is recorded into `model`, which must still be capturing.
    pub fn capture_to_model_begin(&self, stream: u64, model: u64, mode: u32) -> Result<()> {
        let mode = CaptureMode::from_raw(mode)?;
        self.capture_stream(stream)?;
        self.graphs(|g| {
            if g.captures.contains_key(&stream) || g.updates.contains_key(&stream) {
                return Err(AclError::RT_STREAM_CAPTURED);
            }
            let m = g.models.get(&model).ok_or(AclError::INVALID_PARAM)?;
            if !m.capturing {
                return Err(AclError::RT_STREAM_NOT_CAPTURED);
            }
            g.captures.insert(stream, origin(model, mode));
            Ok(())
        })
    }

    /// `aclmdlRICaptureGetInfo(stream)`: the capture status of `stream`
    /// and the model it captures into (0 when none).
    pub fn capture_info(&self, stream: u64) -> Result<(CaptureStatus, u64)> {
        self.check_stream(stream)?;
        self.graphs(|g| {
            Ok(match g.capture(stream) {
                None => (CaptureStatus::None, 0),
                Some(c) if c.invalidated => (CaptureStatus::Invalidated, c.model),
                Some(c) => (CaptureStatus::Active, c.model),
            })
        })
    }

    /// Whether any stream of the process captures or updates a task group
    /// now: a look at the state, not a call (nothing counted, no fault).
    pub fn capture_active(&self) -> bool {
        let g = self.process.graphs.lock();
        !g.captures.is_empty() || !g.updates.is_empty()
    }

    /// Whether `stream` captures (the calls the runtime refuses on a
    /// capturing stream answer 107027).
    pub fn refuse_if_capturing(&self, stream: u64) -> Result<()> {
        self.graphs(|g| {
            if g.captures.contains_key(&stream) {
                Err(AclError::RT_STREAM_CAPTURED)
            } else {
                Ok(())
            }
        })
    }

    /// `aclrtSynchronizeDevice` while any stream captures: 107027.
    pub fn refuse_if_any_capturing(&self) -> Result<()> {
        self.graphs(|g| {
            if g.captures.is_empty() {
                Ok(())
            } else {
                Err(AclError::RT_STREAM_CAPTURED)
            }
        })
    }

    /// The runtime's check before a synchronous copy or set: 107030 when
    /// a capture's mode forbids it in this thread.
    pub fn capture_permits_sync(&self) -> Result<()> {
        self.graphs(|g| g.permits_sync())
    }

    /// `aclmdlRICaptureThreadExchangeMode`: sets this thread's mode and
    /// returns the previous one.
    pub fn capture_exchange_mode(&self, mode: u32) -> Result<u32> {
        let mode = CaptureMode::from_raw(mode)?;
        self.process.enter(Op::Stream)?;
        Ok(exchange_mode(mode) as u32)
    }

    /// `aclmdlRICaptureEnd(stream)`: the model captured, ready to run.
    pub fn capture_end(&self, stream: u64) -> Result<u64> {
        self.check_stream(stream)?;
        let ended = self.graphs(|g| {
            let c = g.capture(stream).ok_or(AclError::RT_STREAM_NOT_CAPTURED)?;
            if !c.origin {
                return Err(AclError::RT_STREAM_CAPTURE_UNMATCHED);
            }
            // In another thread the capture fails and is over (the runtime
            // clears it), unless its mode is relaxed.
            let wrong_thread =
                c.mode != CaptureMode::Relaxed && c.thread != std::thread::current().id();
            let model = c.model;
            let invalidated = c.invalidated;
            let unjoined = g
                .captures
                .values()
                .any(|c| c.model == model && !c.origin && c.unjoined);
            let others = g
                .captures
                .iter()
                .any(|(&s, c)| c.model == model && c.origin && s != stream);
            // The capture is over, whatever the answer.
            g.captures
                .retain(|&s, c| c.model != model || (c.origin && s != stream));
            if !others {
                g.events.retain(|_, m| *m != model);
            }
            let failed = if wrong_thread {
                Some(AclError::RT_STREAM_CAPTURE_WRONG_THREAD)
            } else if invalidated {
                Some(AclError::RT_STREAM_CAPTURE_INVALIDATED)
            } else if unjoined {
                Some(AclError::RT_STREAM_UNJOINED)
            } else {
                None
            };
            if failed.is_none()
                && !others
                && let Some(m) = g.models.get_mut(&model)
            {
                m.capturing = false;
            }
            Ok((model, !others, failed))
        })?;
        let (model, over, failed) = ended;
        if let Some(e) = failed {
            self.drop_family(model);
            return Err(e);
        }
        if over {
            self.close_bodies(model);
        }
        Ok(model)
    }

    /// Records `work` (described by `label`) when `stream` captures or
    /// updates a task group; otherwise hands it back to be run at once.
    pub fn capture_record(
        &self,
        stream: u64,
        kind: &'static str,
        name: impl FnOnce() -> String,
        work: Arc<TaskFn>,
    ) -> Result<Option<Arc<TaskFn>>> {
        self.graphs(|g| {
            if !g.captures.contains_key(&stream) && !g.updates.contains_key(&stream) {
                return Ok(Some(work));
            }
            let task = Task {
                kind,
                name: name(),
                stream,
                work,
            };
            Ok(g.record(stream, task).map(|t| t.work))
        })
    }

    /// The memory a task just recorded on `stream` reads and writes
    /// (nothing when `stream` does not capture): kept with its model for
    /// the tools that check it ([`Emulator::model_ranges`]).
    pub fn capture_touch(&self, stream: u64, ranges: &[(usize, usize)]) {
        let mut g = self.process.graphs.lock();
        let Some(model) = g.captures.get(&stream).map(|c| c.model) else {
            return;
        };
        if let Some(m) = g.models.get_mut(&model) {
            m.ranges
                .extend(ranges.iter().filter(|r| r.0 != 0 && r.1 != 0));
        }
    }

    /// The memory `model`'s tasks read and write (address, bytes), as
    /// recorded: what a replay touches.
    pub fn model_ranges(&self, model: u64) -> Result<Vec<(usize, usize)>> {
        self.graphs(|g| {
            g.models
                .get(&model)
                .map(|m| m.ranges.clone())
                .ok_or(AclError::INVALID_PARAM)
        })
    }

    /// `aclrtRecordEvent(event, stream)` on a capturing stream: the event
    /// belongs to the capture (a stream waiting on it joins), and a replay
    /// records it. `false` when `stream` does not capture.
    pub fn capture_event_record(&self, event: u64, stream: u64) -> Result<bool> {
        let emu = self.clone();
        // The model holds the record, not the event: an event destroyed
        // after the capture (torch_npu's `wait_stream` destroys its own)
        // leaves the replay's record with nothing to mark.
        let work: Arc<TaskFn> = Arc::new(move |s| {
            let _ = emu.record_event(event, s);
            Ok(())
        });
        self.graphs(|g| {
            let Some(c) = g.captures.get_mut(&stream) else {
                return Ok(false);
            };
            c.unjoined = false;
            let model = c.model;
            g.events.insert(event, model);
            if let Some(m) = g.models.get_mut(&model) {
                m.tasks.push(Task {
                    kind: "EVENT_RECORD",
                    name: format!("{event:x}"),
                    stream,
                    work,
                });
            }
            Ok(true)
        })
    }

    /// `aclrtStreamWaitEvent(stream, event)` for an event recorded in a
    /// capture: `stream` joins it (107024 when it captures another model).
    /// `false` when the event belongs to no capture and `stream` does not
    /// capture.
    pub fn capture_event_wait(&self, stream: u64, event: u64) -> Result<bool> {
        self.graphs(|g| {
            let captured = g.events.get(&event).copied();
            let model = match (captured, g.captures.get(&stream)) {
                (None, None) => return Ok(false),
                (None, Some(c)) => c.model,
                (Some(m), Some(c)) if c.model == m => m,
                (Some(_), Some(_)) => return Err(AclError::RT_CAPTURE_DEPENDENCY),
                (Some(m), None) => {
                    let mode = g
                        .captures
                        .values()
                        .find(|c| c.model == m)
                        .map_or(CaptureMode::Global, |c| c.mode);
                    let mut joined = origin(m, mode);
                    joined.origin = false;
                    g.captures.insert(stream, joined);
                    m
                }
            };
            // The wait is a task of the model (nothing to wait for when
            // replayed: the replay runs in order).
            if let Some(m) = g.models.get_mut(&model) {
                m.tasks.push(Task {
                    kind: "EVENT_WAIT",
                    name: format!("{event:x}"),
                    stream,
                    work: Arc::new(|_| Ok(())),
                });
            }
            Ok(true)
        })
    }

    /// `aclmdlRIExecuteAsync(model, stream)`: runs the model's tasks, in
    /// the order they were recorded, on `stream`.
    pub fn execute_model(&self, model: u64, stream: u64) -> Result<()> {
        self.check_stream(stream)?;
        let tasks = self.graphs(|g| {
            if g.captures.contains_key(&stream) {
                return Err(AclError::RT_STREAM_CAPTURED);
            }
            let m = g.models.get(&model).ok_or(AclError::INVALID_PARAM)?;
            if m.capturing {
                return Err(AclError::RT_MODEL_CAPTURED);
            }
            // A conditional task's body runs only as its parent's part.
            if m.parent.is_some() {
                return Err(AclError::RT_PARAM_INVALID);
            }
            Ok(m.tasks.clone())
        })?;
        self.reset_conds(model)?;
        for t in tasks {
            (t.work)(stream)?;
        }
        Ok(())
    }

    /// `aclmdlRIDestroy(model)`.
    pub fn destroy_model(&self, model: u64) -> Result<()> {
        self.graphs(|g| {
            let m = g.models.get(&model).ok_or(AclError::INVALID_PARAM)?;
            if m.capturing {
                return Err(AclError::RT_MODEL_CAPTURED);
            }
            // A conditional task's body goes with its parent.
            if m.parent.is_some() {
                return Err(AclError::RT_PARAM_INVALID);
            }
            Ok(())
        })?;
        self.drop_family(model);
        Ok(())
    }

    /// `aclmdlRIGetId(model)`.
    pub fn model_id(&self, model: u64) -> Result<u32> {
        self.graphs(|g| {
            g.models
                .get(&model)
                .map(|m| m.id)
                .ok_or(AclError::INVALID_PARAM)
        })
    }

    /// What `aclmdlRIDebugPrint` prints: the model, then one line per task.
    pub fn model_description(&self, model: u64) -> Result<Vec<String>> {
        let (head, tasks) = self.model_tasks(model)?;
        let mut lines = vec![head];
        lines.extend(tasks.iter().enumerate().map(|(i, (kind, name, stream))| {
            format!("  task {i}: {kind} {name} (stream {stream})")
        }));
        Ok(lines)
    }

    /// A model's summary and its tasks: (kind, name, stream index), the
    /// streams numbered from 0 in the order they first appear.
    pub fn model_tasks(&self, model: u64) -> Result<(String, Vec<TaskLine>)> {
        self.graphs(|g| {
            let m = g.models.get(&model).ok_or(AclError::INVALID_PARAM)?;
            let head = format!(
                "model {} (device {}): {} tasks, {} task groups{}",
                m.id,
                m.device,
                m.tasks.len(),
                m.groups.len(),
                if m.capturing { ", capturing" } else { "" }
            );
            let mut streams: Vec<u64> = Vec::new();
            let tasks = m
                .tasks
                .iter()
                .map(|t| {
                    let i = streams
                        .iter()
                        .position(|&s| s == t.stream)
                        .unwrap_or_else(|| {
                            streams.push(t.stream);
                            streams.len() - 1
                        });
                    (t.kind, t.name.clone(), i)
                })
                .collect();
            Ok((head, tasks))
        })
    }

    /// `aclmdlRICaptureTaskGrpBegin(stream)`: the tasks recorded from now
    /// on form a group that can be updated.
    pub fn task_group_begin(&self, stream: u64) -> Result<()> {
        self.check_stream(stream)?;
        self.graphs(|g| {
            let c = g
                .captures
                .get(&stream)
                .ok_or(AclError::RT_STREAM_NOT_CAPTURED)?;
            if c.group.is_some() {
                return Err(AclError::RT_PARAM_INVALID);
            }
            let start = g.models.get(&c.model).map_or(0, |m| m.tasks.len());
            if let Some(c) = g.captures.get_mut(&stream) {
                c.group = Some(start);
            }
            Ok(())
        })
    }

    /// `aclmdlRICaptureTaskGrpEnd(stream)`: the group's handle.
    pub fn task_group_end(&self, stream: u64) -> Result<u64> {
        self.check_stream(stream)?;
        self.graphs(|g| {
            let c = g
                .captures
                .get(&stream)
                .ok_or(AclError::RT_STREAM_NOT_CAPTURED)?;
            let start = c.group.ok_or(AclError::RT_PARAM_INVALID)?;
            let model = c.model;
            let handle = g.new_group();
            let m = g.models.get_mut(&model).ok_or(AclError::RT_PARAM_INVALID)?;
            m.groups.insert(handle, (start, m.tasks.len() - start));
            if let Some(c) = g.captures.get_mut(&stream) {
                c.group = None;
            }
            Ok(handle)
        })
    }

    /// `aclmdlRICaptureTaskUpdateBegin(stream, group)`: the work enqueued
    /// on `stream` (which must not capture) until the update ends replaces
    /// the group's tasks.
    pub fn task_update_begin(&self, stream: u64, group: u64) -> Result<()> {
        self.check_stream(stream)?;
        self.graphs(|g| {
            if g.captures.contains_key(&stream) || g.updates.contains_key(&stream) {
                return Err(AclError::RT_STREAM_CAPTURED);
            }
            let model = g
                .models
                .iter()
                .find(|(_, m)| m.groups.contains_key(&group))
                .map(|(&h, _)| h)
                .ok_or(AclError::INVALID_PARAM)?;
            g.updates.insert(
                stream,
                Update {
                    model,
                    group,
                    tasks: Vec::new(),
                },
            );
            Ok(())
        })
    }

    /// `aclmdlRICaptureTaskUpdateEnd(stream)`: the group's tasks are the
    /// ones enqueued since the update began, which must be as many as the
    /// group has (107000 otherwise, and the group is kept).
    pub fn task_update_end(&self, stream: u64) -> Result<()> {
        self.check_stream(stream)?;
        self.graphs(|g| {
            let u = g
                .updates
                .remove(&stream)
                .ok_or(AclError::RT_STREAM_NOT_CAPTURED)?;
            let m = g.models.get_mut(&u.model).ok_or(AclError::INVALID_PARAM)?;
            let &(start, count) = m.groups.get(&u.group).ok_or(AclError::INVALID_PARAM)?;
            if u.tasks.len() != count {
                return Err(AclError::RT_PARAM_INVALID);
            }
            m.tasks.splice(start..start + count, u.tasks);
            Ok(())
        })
    }

    /// Ends every capture of the process that records into `model`
    /// invalidated (a recorded call failed).
    pub fn capture_invalidate(&self, stream: u64) {
        let mut g = self.process.graphs.lock();
        if let Some(model) = g.captures.get(&stream).map(|c| c.model) {
            g.invalidate(model);
        }
    }
}

/// One task of a model as its debug prints show it: the runtime's task
/// type, its name, and the index of its stream in the model.
pub type TaskLine = (&'static str, String, usize);

/// The capture of a stream that begins one, in this thread.
fn origin(model: u64, mode: CaptureMode) -> Capture {
    Capture {
        model,
        mode,
        thread: std::thread::current().id(),
        origin: true,
        invalidated: false,
        unjoined: false,
        group: None,
    }
}
