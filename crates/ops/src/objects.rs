//! The objects an operator call is described with: tensor descriptors
//! (`aclTensorDesc`), data buffers (`aclDataBuffer`) and attribute sets
//! (`aclopAttr`).
//!
//! Each object lives in one table of this process; the pointer a C caller
//! holds is the address of the object's box, and every use looks it up
//! there first. A pointer that names no live object of the expected kind
//! (NULL, garbage, one destroyed already, a buffer passed as a descriptor)
//! is refused with the runtime's code, never dereferenced.

use std::collections::{BTreeMap, HashMap};

use aclmem_core::AclError;
use aclmem_fork::ForkMutex;

/// The most dimensions a descriptor holds (`ACL_MAX_DIM_CNT`).
pub const MAX_DIMS: usize = 128;

/// `aclMemType`: where an operator's input lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// `ACL_MEMTYPE_DEVICE` (0): device memory, the default.
    Device,
    /// `ACL_MEMTYPE_HOST` (1) or `ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT`
    /// (2): host memory the caller owns (sizes, axes, scalars).
    Host,
}

impl Placement {
    /// From the C value; anything else is `None`.
    pub fn from_raw(raw: i32) -> Option<Placement> {
        match raw {
            0 => Some(Placement::Device),
            1 | 2 => Some(Placement::Host),
            _ => None,
        }
    }
}

/// An `aclTensorDesc`: what `aclCreateTensorDesc` made, with what the
/// setters changed.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorDesc {
    /// `aclDataType` as the caller gave it.
    pub dtype: i32,
    /// The shape the operator sees (`aclCreateTensorDesc`'s dims).
    pub dims: Vec<i64>,
    /// `aclFormat` of the shape the operator sees.
    pub format: i32,
    /// The storage format (`aclSetTensorFormat`), if set.
    pub storage_format: Option<i32>,
    /// The storage shape (`aclSetTensorShape`), if set.
    pub storage_dims: Option<Vec<i64>>,
    /// Where the data lives (`aclSetTensorPlaceMent`).
    pub placement: Placement,
    /// `aclSetTensorDescName`.
    pub name: String,
}

/// An `aclDataBuffer`: an address and a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataBuffer {
    /// The first byte (device or host, as the descriptor's placement says).
    pub data: usize,
    /// How many bytes.
    pub size: usize,
}

/// One operator attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// `aclopSetAttrBool`.
    Bool(bool),
    /// `aclopSetAttrInt`.
    Int(i64),
    /// `aclopSetAttrFloat`.
    Float(f32),
    /// `aclopSetAttrString`.
    String(String),
    /// `aclopSetAttrDataType`.
    DataType(i32),
    /// `aclopSetAttrListBool`.
    ListBool(Vec<bool>),
    /// `aclopSetAttrListInt`.
    ListInt(Vec<i64>),
    /// `aclopSetAttrListFloat`.
    ListFloat(Vec<f32>),
    /// `aclopSetAttrListListInt`.
    ListListInt(Vec<Vec<i64>>),
}

/// An `aclopAttr`: named values.
pub type OpAttr = BTreeMap<String, AttrValue>;

/// A live object.
#[derive(Debug)]
enum Object {
    Desc(TensorDesc),
    Buffer(DataBuffer),
    Attr(OpAttr),
}

/// The objects, by the address of their box.
static OBJECTS: ForkMutex<Option<HashMap<usize, Box<Object>>>> = ForkMutex::new(|| None);

fn insert(object: Object) -> usize {
    let boxed = Box::new(object);
    let handle = &*boxed as *const Object as usize;
    OBJECTS
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(handle, boxed);
    handle
}

fn remove(handle: usize, is_kind: fn(&Object) -> bool) -> Result<(), AclError> {
    let mut objects = OBJECTS.lock();
    let map = objects.get_or_insert_with(HashMap::new);
    match map.get(&handle) {
        Some(o) if is_kind(o) => {
            map.remove(&handle);
            Ok(())
        }
        _ => Err(AclError::INVALID_PARAM),
    }
}

fn with<R>(handle: usize, f: impl FnOnce(&mut Object) -> Option<R>) -> Result<R, AclError> {
    let mut objects = OBJECTS.lock();
    objects
        .get_or_insert_with(HashMap::new)
        .get_mut(&handle)
        .and_then(|o| f(o))
        .ok_or(AclError::INVALID_PARAM)
}

/// Makes a descriptor; its handle.
pub fn create_desc(desc: TensorDesc) -> usize {
    insert(Object::Desc(desc))
}

/// Destroys a descriptor.
pub fn destroy_desc(handle: usize) -> Result<(), AclError> {
    remove(handle, |o| matches!(o, Object::Desc(_)))
}

/// Runs `f` on a live descriptor.
pub fn with_desc<R>(handle: usize, f: impl FnOnce(&mut TensorDesc) -> R) -> Result<R, AclError> {
    with(handle, |o| match o {
        Object::Desc(d) => Some(f(d)),
        _ => None,
    })
}

/// Makes a data buffer; its handle.
pub fn create_buffer(buffer: DataBuffer) -> usize {
    insert(Object::Buffer(buffer))
}

/// Destroys a data buffer.
pub fn destroy_buffer(handle: usize) -> Result<(), AclError> {
    remove(handle, |o| matches!(o, Object::Buffer(_)))
}

/// A live data buffer's value.
pub fn buffer(handle: usize) -> Result<DataBuffer, AclError> {
    with(handle, |o| match o {
        Object::Buffer(b) => Some(*b),
        _ => None,
    })
}

/// Makes an empty attribute set; its handle.
pub fn create_attr() -> usize {
    insert(Object::Attr(OpAttr::new()))
}

/// Destroys an attribute set.
pub fn destroy_attr(handle: usize) -> Result<(), AclError> {
    remove(handle, |o| matches!(o, Object::Attr(_)))
}

/// Sets `name` to `value` in a live attribute set.
pub fn set_attr(handle: usize, name: String, value: AttrValue) -> Result<(), AclError> {
    with(handle, |o| match o {
        Object::Attr(a) => {
            a.insert(name, value);
            Some(())
        }
        _ => None,
    })
}

/// A live attribute set's values.
pub fn attr(handle: usize) -> Result<OpAttr, AclError> {
    with(handle, |o| match o {
        Object::Attr(a) => Some(a.clone()),
        _ => None,
    })
}

/// How many objects are live (for tests and the leak report).
pub fn live() -> usize {
    OBJECTS.lock().as_ref().map_or(0, HashMap::len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc() -> TensorDesc {
        TensorDesc {
            dtype: 0,
            dims: vec![2, 3],
            format: 2,
            storage_format: None,
            storage_dims: None,
            placement: Placement::Device,
            name: String::new(),
        }
    }

    #[test]
    fn a_handle_names_only_its_own_kind_and_only_while_live() {
        let d = create_desc(desc());
        let b = create_buffer(DataBuffer { data: 64, size: 8 });
        assert_eq!(with_desc(d, |d| d.dims.clone()), Ok(vec![2, 3]));
        assert_eq!(buffer(d), Err(AclError::INVALID_PARAM));
        assert_eq!(with_desc(b, |_| ()), Err(AclError::INVALID_PARAM));
        assert_eq!(destroy_desc(b), Err(AclError::INVALID_PARAM));
        assert_eq!(destroy_desc(d), Ok(()));
        assert_eq!(destroy_desc(d), Err(AclError::INVALID_PARAM));
        assert_eq!(with_desc(d, |_| ()), Err(AclError::INVALID_PARAM));
        assert_eq!(buffer(b), Ok(DataBuffer { data: 64, size: 8 }));
        assert_eq!(destroy_buffer(b), Ok(()));
        assert_eq!(buffer(0), Err(AclError::INVALID_PARAM));
        assert_eq!(buffer(usize::MAX), Err(AclError::INVALID_PARAM));
    }

    #[test]
    fn attributes_keep_the_last_value_per_name() {
        let a = create_attr();
        set_attr(a, "alpha".into(), AttrValue::Float(1.0)).unwrap();
        set_attr(a, "alpha".into(), AttrValue::Float(2.5)).unwrap();
        set_attr(a, "keep_dims".into(), AttrValue::Bool(true)).unwrap();
        let values = attr(a).unwrap();
        assert_eq!(values.get("alpha"), Some(&AttrValue::Float(2.5)));
        assert_eq!(values.len(), 2);
        destroy_attr(a).unwrap();
        assert_eq!(
            set_attr(a, "x".into(), AttrValue::Int(1)),
            Err(AclError::INVALID_PARAM)
        );
    }
}
