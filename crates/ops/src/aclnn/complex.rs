//! Complex tensors in the operator API: a complex view is the same view of
//! pairs of its parts ([`View::complex`](super::View::complex)), which the
//! data operators move as any other. Fills, copies and casts are planned
//! here as plans of the parts; every other plan of a complex tensor is
//! refused ([`Plan::new`]).

use aclmem_core::AclError;

use super::View;
use super::plan::{Arg, Kind, Plan};
use crate::tensor::Num;

impl Plan {
    /// `out = value`, a complex value (`im` its imaginary part) into a
    /// complex view as two fills of its parts; a real view takes `re`.
    pub fn fill_complex(name: &'static str, out: View, re: Num, im: f64) -> Result<Plan, AclError> {
        if !out.complex {
            return Plan::new(name, Kind::Fill(re), Vec::new(), out);
        }
        let parts = vec![
            Plan::checked(name, Kind::Fill(re), Vec::new(), out.part(0))?,
            Plan::checked(name, Kind::Fill(Num::F(im)), Vec::new(), out.part(1))?,
        ];
        Plan::each(name, parts)
    }

    /// A plan with a complex view (see [`Plan::new`]).
    pub(super) fn of_complex(
        name: &'static str,
        kind: Kind,
        args: Vec<Arg>,
        out: View,
    ) -> Result<Plan, AclError> {
        match (kind, args.as_slice()) {
            (Kind::Copy, [Arg::Tensor(a)]) => match (a.complex, out.complex) {
                (true, true) => Plan::checked(name, Kind::Copy, args, out),
                (false, true) => {
                    let re = Plan::checked(name, Kind::Copy, args.clone(), out.part(0))?;
                    let im = Plan::checked(name, Kind::Fill(Num::I(0)), Vec::new(), out.part(1))?;
                    Plan::each(name, vec![re, im])
                }
                _ => Plan::checked(name, Kind::Copy, vec![Arg::Tensor(a.part(0))], out),
            },
            (Kind::Fill(value), []) => Plan::fill_complex(name, out, value, 0.0),
            _ => Err(AclError::INVALID_PARAM),
        }
    }
}
