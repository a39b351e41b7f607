//! The operators, computed on host copies of their tensors.
//!
//! One function per operator of the catalogue's list
//! ([`aclmem_sys::with_operators!`]), named as the operator is; the list
//! decides which names [`find`] knows, so an operator listed without its
//! function here does not compile. Inputs and outputs follow the operator
//! definitions torch_npu launches (its `OpCommand` path): device tensors
//! contiguous unless named otherwise, sizes, axes and scalars as host
//! tensors. Each kernel checks what it is given (counts, types, shapes,
//! attributes) and answers the runtime's operator codes when they do not
//! fit; the values it computes follow PyTorch's CPU semantics, except the
//! random ones, which are reproducible from their key and counter but are
//! not an NPU's numbers.

#![allow(non_snake_case)]

mod activation;
mod advanced;
mod basic;
mod batchnorm;
mod call;
mod conv;
mod conv3d;
mod conv_backprop;
mod dropout;
mod elementary;
mod elementwise;
mod embedbag;
mod embedding;
mod float;
mod groupnorm;
mod index;
mod layout;
mod loss;
mod math;
mod matmul;
mod mirror;
mod norm;
mod optim;
mod pointloss;
mod pool;
mod pool3d;
mod random;
mod reduce;
mod resize;
mod resize3d;
mod resized;
mod select;
mod shape;
mod softmax;
mod sort;
mod statistics;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;

pub use call::{Call, HostInputs, Inputs, Kernel, Spec, Written, plain_format};
pub(crate) use random::{generator, standard_normal, unit, words_per_element};

use activation::*;
use advanced::*;
use basic::*;
use batchnorm::*;
use conv::*;
use conv_backprop::*;
use conv3d::*;
use dropout::*;
use elementary::*;
use elementwise::*;
use embedbag::*;
use embedding::*;
use groupnorm::*;
use index::*;
use layout::*;
use loss::*;
use math::*;
use matmul::*;
use mirror::*;
use norm::*;
use optim::*;
use pointloss::*;
use pool::*;
use pool3d::*;
use random::*;
use reduce::*;
use resize::*;
use resize3d::*;
use resized::*;
use select::*;
use softmax::*;
use sort::*;
use statistics::*;

macro_rules! kernel_table {
    ($($name:ident: $what:literal;)*) => {
        /// The kernel of an emulated operator, by its name.
        pub fn find(name: &str) -> Option<Kernel> {
            match name {
                $(stringify!($name) => Some($name as Kernel),)*
                _ => None,
            }
        }
    };
}
aclmem_sys::with_operators!(kernel_table);
