//! The Ascend Transformer Boost library's functions (`libatb.so`) that
//! torch_npu's ATB plugin (`libop_plugin_atb.so`) links: C++ functions of
//! namespace `atb`, listed under their Itanium-mangled symbols, appended
//! to the entries by [`__with_attention_api!`](crate::__with_attention_api)
//! (one list for every consumer). Prototypes are ATB's headers
//! (`include/atb/context.h`, `operation.h`, `utils.h`,
//! `infer_op_params.h`; docs/operators.md, "The Ascend Transformer
//! Boost").

/// ATB's entries after `$rest`, handed to `$callback` (see
/// [`with_framework_functions!`](crate::with_framework_functions)).
#[doc(hidden)]
#[macro_export]
macro_rules! __with_atb_api {
    ($callback:ident; $($rest:tt)*) => {
        $callback! {
            $($rest)*
            _ZN3atb13CreateContextEPPNS_7ContextE in Atb: Emulated -> AtbStatus =
                "atb::Status atb::CreateContext(atb::Context **context)";
            _ZN3atb14DestroyContextEPNS_7ContextE in Atb: Emulated -> AtbStatus =
                "atb::Status atb::DestroyContext(atb::Context *context)";
            _ZN3atb15CreateOperationINS_5infer11LinearParamEEEiRKT_PPNS_9OperationE in Atb: Unsupported -> AtbStatus =
                "atb::Status atb::CreateOperation<atb::infer::LinearParam>(const atb::infer::LinearParam &opParam, atb::Operation **operation)";
            _ZN3atb15CreateOperationINS_5infer12ElewiseParamEEEiRKT_PPNS_9OperationE in Atb: Unsupported -> AtbStatus =
                "atb::Status atb::CreateOperation<atb::infer::ElewiseParam>(const atb::infer::ElewiseParam &opParam, atb::Operation **operation)";
            _ZN3atb15CreateOperationINS_5infer12RmsNormParamEEEiRKT_PPNS_9OperationE in Atb: Unsupported -> AtbStatus =
                "atb::Status atb::CreateOperation<atb::infer::RmsNormParam>(const atb::infer::RmsNormParam &opParam, atb::Operation **operation)";
            _ZN3atb15CreateOperationINS_5infer14GroupTopkParamEEEiRKT_PPNS_9OperationE in Atb: Unsupported -> AtbStatus =
                "atb::Status atb::CreateOperation<atb::infer::GroupTopkParam>(const atb::infer::GroupTopkParam &opParam, atb::Operation **operation)";
            _ZN3atb15CreateOperationINS_5infer18SelfAttentionParamEEEiRKT_PPNS_9OperationE in Atb: Unsupported -> AtbStatus =
                "atb::Status atb::CreateOperation<atb::infer::SelfAttentionParam>(const atb::infer::SelfAttentionParam &opParam, atb::Operation **operation)";
            _ZN3atb15CreateOperationINS_5infer19PagedAttentionParamEEEiRKT_PPNS_9OperationE in Atb: Emulated -> AtbStatus =
                "atb::Status atb::CreateOperation<atb::infer::PagedAttentionParam>(const atb::infer::PagedAttentionParam &opParam, atb::Operation **operation)";
            _ZN3atb15CreateOperationINS_5infer20ReshapeAndCacheParamEEEiRKT_PPNS_9OperationE in Atb: Unsupported -> AtbStatus =
                "atb::Status atb::CreateOperation<atb::infer::ReshapeAndCacheParam>(const atb::infer::ReshapeAndCacheParam &opParam, atb::Operation **operation)";
            _ZN3atb15CreateOperationINS_5infer9RopeParamEEEiRKT_PPNS_9OperationE in Atb: Unsupported -> AtbStatus =
                "atb::Status atb::CreateOperation<atb::infer::RopeParam>(const atb::infer::RopeParam &opParam, atb::Operation **operation)";
            _ZN3atb16DestroyOperationEPNS_9OperationE in Atb: Emulated -> AtbStatus =
                "atb::Status atb::DestroyOperation(atb::Operation *operation)";
            _ZN3atb5Utils13GetTensorSizeERKNS_6TensorE in Atb: Emulated -> Count =
                "uint64_t atb::Utils::GetTensorSize(const atb::Tensor &tensor)";
        }
    };
}
