//! Conditional tasks of ACL graphs (`aclmdlRICondHandleCreate`,
//! `aclmdlRICondHandleGetCondPtr`, `aclmdlRIAddCondTask`): a capture
//! records a task that, when the model runs, reads a 64-bit value in
//! device memory and runs one of its bodies (IF, SWITCH) or one body while
//! the value is not 0 (WHILE). Each body is a model of its own, made by the
//! task, captured into with `aclmdlRICaptureToModelRIBegin`, owned by the
//! model that holds the task. docs/graphs.md gives the rules and their
//! sources.

use std::sync::Arc;

use aclmem_core::{AclError, Product};
use aclmem_sys::MallocPolicy;

use crate::process::Result;
use crate::process::graphs::{Cond, CondKind, Model, Task, TaskFn};
use crate::{Emulator, Op, Target, args};

/// The bytes of a condition value.
const VALUE: usize = size_of::<u64>();

impl Emulator {
    /// Conditional tasks need the runtime's software submission queues,
    /// which CANN's conditional-graph sample lists for the A2 and A3
    /// series only (not the Atlas 350): 207000 elsewhere, the
    /// conservative answer (docs/graphs.md).
    fn conds_supported(&self) -> Result<()> {
        match self.product() {
            Product::AtlasA2 | Product::AtlasA3 => Ok(()),
            _ => Err(AclError::RT_FEATURE_NOT_SUPPORT),
        }
    }

    /// `aclmdlRICondHandleCreate(model, default, flag)`: a condition
    /// handle of `model`, which must be capturing; its value (device
    /// memory, 0 at first) is set to `default` before every execution when
    /// `flag` is `ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT` (1), left alone
    /// when it is 0 (107000 for other flags or a model not capturing).
    pub fn cond_handle_create(&self, model: u64, default: u32, flag: u32) -> Result<u64> {
        self.process.enter(Op::Stream)?;
        if flag > 1 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        self.conds_supported()?;
        let device = {
            let g = self.process.graphs.lock();
            let m = g.models.get(&model).ok_or(AclError::RT_PARAM_INVALID)?;
            if !m.capturing {
                return Err(AclError::RT_PARAM_INVALID);
            }
            m.device
        };
        let size = args::malloc(VALUE)?;
        let value = self.place_device(
            Target::Device(device),
            size,
            MallocPolicy::from_raw(0),
            true,
        )?;
        let made = self.write(value, &0u64.to_ne_bytes()).and_then(|()| {
            let mut g = self.process.graphs.lock();
            let handle = g.new_cond();
            let m = g
                .models
                .get_mut(&model)
                .filter(|m| m.capturing)
                .ok_or(AclError::RT_PARAM_INVALID)?;
            m.conds.push(handle);
            g.conds.insert(
                handle,
                Cond {
                    model,
                    default: (flag == 1).then_some(u64::from(default)),
                    value,
                    task: None,
                },
            );
            Ok(handle)
        });
        if made.is_err() {
            let _ = self.process.free_device(value);
        }
        made
    }

    /// `aclmdlRICondHandleGetCondPtr(handle)`: the device address of the
    /// handle's value.
    pub fn cond_value_address(&self, handle: u64) -> Result<usize> {
        self.process.enter(Op::Query)?;
        self.conds_supported()?;
        let g = self.process.graphs.lock();
        g.conds
            .get(&handle)
            .map(|c| c.value)
            .ok_or(AclError::RT_PARAM_INVALID)
    }

    /// `aclmdlRIAddCondTask({handle, kind, bodies}, stream, flags)`:
    /// records on `stream` (which must capture the handle's model) a task
    /// of `kind` over `bodies` new models, returned in order, each ready to
    /// be captured into. A handle serves one task; `flags` is reserved
    /// (0). 107000 for a wrong kind, count, flag, handle or model, 107029
    /// for a stream that does not capture.
    pub fn add_cond_task(
        &self,
        handle: u64,
        kind: u32,
        bodies: u32,
        stream: u64,
        flags: u32,
    ) -> Result<Vec<u64>> {
        self.check_stream(stream)?;
        self.process.enter(Op::Stream)?;
        if kind > CondKind::Switch as u32 || flags != 0 || handle == 0 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let used = {
            let g = self.process.graphs.lock();
            g.conds.get(&handle).map(|c| c.task.is_some())
        };
        if used != Some(false) {
            return Err(AclError::RT_PARAM_INVALID);
        }
        self.conds_supported()?;
        let emu = self.clone();
        let work: Arc<TaskFn> = Arc::new(move |s| emu.run_cond(handle, s));
        let mut g = self.process.graphs.lock();
        let capture = g
            .captures
            .get(&stream)
            .ok_or(AclError::RT_STREAM_NOT_CAPTURED)?;
        let parent = capture.model;
        let cond = g.conds.get(&handle).ok_or(AclError::RT_PARAM_INVALID)?;
        if cond.model != parent || cond.task.is_some() {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let kind = CondKind::checked(kind, bodies)?;
        let device = g.models.get(&parent).map_or(0, |m| m.device);
        let made: Vec<u64> = (0..bodies)
            .map(|_| {
                let body = g.new_model(device);
                if let Some(m) = g.models.get_mut(&body) {
                    m.parent = Some(parent);
                }
                body
            })
            .collect();
        if let Some(c) = g.conds.get_mut(&handle) {
            c.task = Some((kind, made.clone()));
        }
        let task = Task {
            kind: "CONDITION_OP",
            name: format!("{kind:?} over {bodies} models, handle {handle:x}"),
            stream,
            work,
        };
        if let Some(c) = g.captures.get_mut(&stream) {
            c.unjoined = !c.origin;
        }
        if let Some(m) = g.models.get_mut(&parent) {
            m.tasks.push(task);
        }
        Ok(made)
    }

    /// Runs the conditional task of `handle` on `stream`: reads its value
    /// (again before every pass of a WHILE) and runs the body it selects.
    fn run_cond(&self, handle: u64, stream: u64) -> Result<()> {
        let (value, kind, bodies) = {
            let g = self.process.graphs.lock();
            let c = g.conds.get(&handle).ok_or(AclError::RT_PARAM_INVALID)?;
            let (kind, bodies) = c.task.clone().ok_or(AclError::RT_PARAM_INVALID)?;
            (c.value, kind, bodies)
        };
        let read = || -> Result<u64> {
            let mut buf = [0u8; VALUE];
            self.read(value, &mut buf)?;
            Ok(u64::from_ne_bytes(buf))
        };
        match kind {
            CondKind::If => {
                let body = if read()? != 0 {
                    bodies.first()
                } else {
                    bodies.get(1)
                };
                body.map_or(Ok(()), |&b| self.run_body(b, stream))
            }
            CondKind::While => {
                while read()? != 0 {
                    self.run_body(bodies[0], stream)?;
                }
                Ok(())
            }
            CondKind::Switch => usize::try_from(read()?)
                .ok()
                .and_then(|i| bodies.get(i))
                .map_or(Ok(()), |&b| self.run_body(b, stream)),
        }
    }

    /// Runs the tasks of `body`, a model a conditional task owns (107028
    /// while it is still being captured into).
    fn run_body(&self, body: u64, stream: u64) -> Result<()> {
        let tasks = {
            let g = self.process.graphs.lock();
            let m = g.models.get(&body).ok_or(AclError::RT_PARAM_INVALID)?;
            if m.capturing {
                return Err(AclError::RT_MODEL_CAPTURED);
            }
            m.tasks.clone()
        };
        tasks.iter().try_for_each(|t| (t.work)(stream))
    }

    /// Before `model` runs: every condition value of it and of its bodies
    /// made with `ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT` is set to its
    /// default, as the runtime does when a model is executed.
    pub(crate) fn reset_conds(&self, model: u64) -> Result<()> {
        let resets: Vec<(usize, u64)> = {
            let g = self.process.graphs.lock();
            g.family(model)
                .iter()
                .filter_map(|m| g.models.get(m))
                .flat_map(|m| m.conds.iter())
                .filter_map(|h| g.conds.get(h))
                .filter_map(|c| c.default.map(|d| (c.value, d)))
                .collect()
        };
        resets
            .into_iter()
            .try_for_each(|(addr, v)| self.write(addr, &v.to_ne_bytes()))
    }

    /// Removes `model` and the bodies its conditional tasks own, freeing
    /// their condition values: what destroying a root model does.
    pub(crate) fn drop_family(&self, model: u64) {
        let values: Vec<usize> = {
            let mut g = self.process.graphs.lock();
            let family = g.family(model);
            let mut values = Vec::new();
            for m in &family {
                if let Some(Model { conds, .. }) = g.models.remove(m) {
                    values.extend(
                        conds
                            .iter()
                            .filter_map(|h| g.conds.remove(h))
                            .map(|c| c.value),
                    );
                }
            }
            g.updates.retain(|_, u| !family.contains(&u.model));
            values
        };
        for v in values {
            let _ = self.process.free_device(v);
        }
    }

    /// At the end of `model`'s capture: its bodies nobody captures into
    /// any more are complete (a body never captured into runs nothing).
    pub(crate) fn close_bodies(&self, model: u64) {
        let mut g = self.process.graphs.lock();
        let family = g.family(model);
        let open: Vec<u64> = g.captures.values().map(|c| c.model).collect();
        for m in family.iter().skip(1) {
            if !open.contains(m)
                && let Some(m) = g.models.get_mut(m)
            {
                m.capturing = false;
            }
        }
    }
}
