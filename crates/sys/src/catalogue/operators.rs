//! The catalogue's hand-kept list of the operators the emulator carries
//! out, as a macro (each fact once): the source of the kernel table
//! (`aclmem-ops`), the catalogue and `docs/catalogue.md`.

/// Calls `$callback! { Name: "what it does"; ... }` with every operator
/// the emulated `aclopCompileAndExecute(V2)` carries out (by the operator
/// type a framework names), in one fixed order. Any other operator answers
/// `ACL_ERROR_OP_NOT_FOUND` (100024).
///
/// ```
/// macro_rules! names {
///     ($($name:ident: $what:literal;)*) => { [$(stringify!($name)),*] };
/// }
/// assert!(aclmem_sys::with_operators!(names).contains(&"ViewCopy"));
/// assert_eq!(aclmem_sys::with_operators!(names).len(), aclmem_sys::catalogue::OPERATORS.len());
/// ```
#[macro_export]
macro_rules! with_operators {
    ($callback:ident) => {
        $callback! {
            Abs: "absolute value";
            AdaptiveAvgPool2d: "the mean of each adaptive bin of the last two dims (output_size): rows floor(i*H/oH) to ceil((i+1)*H/oH)";
            AdaptiveAvgPool2dGrad: "the gradient of AdaptiveAvgPool2d, shared equally over each bin (orig_input_shape)";
            Add: "x1 + x2, broadcast";
            Addcdiv: "input_data + value * x1 / x2, broadcast (float types)";
            Addcmul: "input_data + value * x1 * x2, broadcast (float types)";
            ArgMaxV2: "the index of the largest element along dimension (the first of equal ones, NaN the largest; keep_dims), int32 or int64";
            AsStrided: "a strided view of x's storage (size, stride, storage_offset), made contiguous";
            AvgPoolV2: "2-D average pooling in NCHW (ksize, strides, padding_mode, pads, ceil_mode, exclusive, divisor_override, global_pooling)";
            AvgPoolV2Grad: "the gradient of AvgPoolV2 into orig_input_shape (AvgPoolV2's attributes)";
            AxpyV2: "x1 + alpha * x2, broadcast";
            BN3DTrainingReduce: "as BNTrainingReduce, for a 5-D x (BatchNorm3d)";
            BN3DTrainingReduceGrad: "as BNTrainingReduceGrad, for a 5-D x";
            BN3DTrainingUpdate: "as BNTrainingUpdate, for a 5-D x";
            BN3DTrainingUpdateGrad: "as BNTrainingUpdateGrad, for a 5-D x";
            BNInfer: "batch norm with given statistics: (x - mean) / sqrt(variance + epsilon) * scale + offset, per channel (dim 1)";
            BNInferGrad: "the gradient of BNInfer's x: grads * scale / sqrt(variance + epsilon)";
            BNTrainingReduce: "per channel (dim 1), the sum and the sum of squares of x: batch norm training's first half";
            BNTrainingReduceGrad: "the gradient of batch norm training's x from grads, x, diff_scale, diff_offset, scale and the batch statistics";
            BNTrainingUpdate: "batch norm training from BNTrainingReduce's sums: y, the running mean and variance updated (factor; the variance unbiased), the batch mean and variance";
            BNTrainingUpdateGrad: "per channel, the gradients of batch norm's scale and offset: sum(grads * normalised x), sum(grads)";
            BatchMatMul: "matrices [..., m, k] times [..., k, n] (adj_x1, adj_x2 transpose them), batch dims broadcast; float types, fp16/bf16 accumulated in fp32";
            BatchMatMulV2: "as BatchMatMul, with an optional bias of n added to every row";
            BinaryCrossEntropy: "-weight * (t * ln x + (1 - t) * ln(1 - x)), logarithms at least -100, reduced (reduction none/mean/sum)";
            BinaryCrossEntropyGrad: "the gradient of BinaryCrossEntropy: weight * dy * (x - t) / max(x * (1 - x), 1e-12)";
            BroadcastTo: "x broadcast to a shape";
            Cast: "each element converted to dst_type";
            Ceil: "the least integer not below x";
            ClipByValueV2: "x clamped to [clip_value_min, clip_value_max], broadcast (float types)";
            ConcatD: "the inputs joined along concat_dim";
            Conv2D: "a 2-D convolution in NCHW (strides, pads, dilations, groups; optional bias), im2col and a matrix product";
            Conv2DBackpropFilter: "the gradient of Conv2D's filter (x, filter_size, out_backprop; Conv2D's attributes), summed over the images; im2col and a matrix product";
            Conv2DBackpropInput: "the gradient of Conv2D's input (input_size, filter, out_backprop; Conv2D's attributes): a transposed convolution";
            Conv2DTranspose: "a transposed 2-D convolution in NCHW into input_size (strides, pads, dilations, groups, output_padding; optional bias)";
            Conv3D: "a 3-D convolution in NCDHW (strides, pads, dilations, groups; optional bias), im2col and a matrix product";
            Conv3DBackpropFilter: "the gradient of Conv3D's filter (x, filter_size, out_backprop; Conv3D's attributes), summed over the images";
            Conv3DBackpropInput: "the gradient of Conv3D's input (input_size, filter, out_backprop; Conv3D's attributes): a transposed convolution";
            Conv3DTranspose: "a transposed 3-D convolution in NCDHW into input_size (strides, pads, dilations, groups, output_padding; optional bias)";
            Cos: "cos x, in floating point";
            Cumsum: "running sums along axis (exclusive, reverse); floats summed in fp32 (fp64 for float64), each rounded once";
            Dot: "the inner product of two 1-D tensors (a scalar)";
            DropOutDoMask: "x / keep_prob where the bit mask's bit is set, else 0: dropout and its gradient";
            Elu: "scale * x above 0, else scale * alpha * (exp(input_scale * x) - 1): elu, selu, celu";
            EluGradV2: "the gradient of Elu from its input or output (is_result)";
            EmbeddingBag: "each bag's sum, mean or maximum of the weight rows its indices name (mode, offsets, include_last_offset, padding_idx, per_sample_weights); outputs y, offset2bag, bag_size, max_indices";
            EmbeddingDenseGrad: "the gradient of an embedding: grad's rows summed into the rows indices name (num_weights, padding_idx, scale_grad_by_freq)";
            Equal: "x1 == x2, broadcast (bool)";
            Exp: "e to the power x (base, scale and shift at their defaults)";
            Fill: "a tensor of dims filled with a value";
            Floor: "the greatest integer not above x";
            GatherV2: "the slices of x along axis that indices name (batch_dims 0): embedding, index_select";
            Gelu: "GELU, the tanh form (as the NPU computes it, whatever approximate says)";
            GeluGrad: "dy times the derivative of Gelu at x";
            Greater: "x1 > x2, broadcast (bool)";
            GreaterEqual: "x1 >= x2, broadcast (bool)";
            GroupNorm: "each image's channels in num_groups groups, each normalised by its mean and variance (eps), times gamma plus beta per channel; outputs y, mean, variance [N, num_groups]";
            Identity: "a copy";
            IndexPutV2: "x with the elements index tensors pick set to (accumulate: increased by) value";
            IsClose: "|x1 - x2| <= atol + rtol * |x2| (rtol, atol, equal_nan)";
            IsFinite: "x is neither infinite nor NaN (bool)";
            KLDiv: "t * (ln t - x) (exp(t) * (t - x) with log_target), reduced (reduction none/sum/mean/batchmean)";
            KlDivLossGrad: "the gradient of KLDiv: -t * dy (-exp(t) * dy with log_target)";
            L1LossGrad: "the gradient of LpLoss with p 1: sign(x - t) * dy";
            LayerNorm: "rows from begin_norm_axis normalised by mean and variance, times gamma plus beta (epsilon); outputs y, mean, variance";
            LayerNormGrad: "the gradients of LayerNorm from dy, x, variance, mean, gamma: dx, dgamma, dbeta";
            LeakyRelu: "x, or negative_slope * x where x <= 0";
            LeakyReluGrad: "the gradient of LeakyRelu (negative_slope)";
            Lerp: "start + weight * (end - start), broadcast (float types)";
            Less: "x1 < x2, broadcast (bool)";
            LessEqual: "x1 <= x2, broadcast (bool)";
            Log: "the natural logarithm of x (base, scale and shift at their defaults)";
            LogSoftmaxGrad: "dy - exp(y) * sum(dy) along axis";
            LogSoftmaxV2: "x - max - ln(sum(exp(x - max))) along axes (one axis)";
            LogicalAnd: "x1 and x2, broadcast (bool)";
            LogicalNot: "not x (bool)";
            LogicalOr: "x1 or x2, broadcast (bool)";
            LpLoss: "|x - t| (p 1), reduced (reduction none/mean/sum)";
            LpNormReduceV2: "the sum of |x|^p over axes (max |x| for p inf, min for -inf, the non-zero count for 0; keepdim, epsilon): the first half of an Lp norm";
            LpNormUpdateV2: "the Lp norm from LpNormReduceV2's sums: x^(1/p), at least epsilon";
            MaskedFill: "x with value where mask (broadcast) is true";
            MaskedSelect: "the elements of x where mask is true, 1-D (the real shape goes to the output descriptor)";
            MatMul: "x1 (m, k) times x2 (k, n), each transposed where transpose_x1/transpose_x2 say, plus an optional bias of n; float types, fp16/bf16 accumulated in fp32";
            MatMulV2: "as MatMul (offset_x 0 only: no quantised form)";
            MaxPoolGradWithArgmaxV1: "the gradient of MaxPoolWithArgmaxV1: each output's gradient to its window's maximum (taken from x)";
            MaxPoolWithArgmaxV1: "2-D max pooling in NCHW (ksize, strides, pads, dilation, ceil_mode) and the uint16 mask of where each maximum was";
            Maximum: "the larger of x1 and x2, broadcast";
            Minimum: "the smaller of x1 and x2, broadcast";
            MirrorPad: "x padded by its own elements mirrored at each end of each axis (paddings; mode REFLECT or SYMMETRIC)";
            Mish: "x * tanh(ln(1 + exp(x)))";
            MishGrad: "the gradient of Mish at x";
            MseLoss: "(x - t)^2, reduced (reduction none/mean/sum)";
            MseLossGrad: "the gradient of MseLoss: 2 * (x - t) * dy";
            Mul: "x1 * x2, broadcast";
            NLLLoss: "-weight[t] * x[i, t] per row, reduced (reduction none/mean/sum, ignore_index); and the total weight";
            NLLLossGrad: "the gradient of NLLLoss";
            Neg: "-x";
            NonZero: "coordinates of the non-zero elements, [count, rank] or transposed (the real shape goes to the output descriptor)";
            NotEqual: "x1 != x2, broadcast (bool)";
            OnesLike: "ones of x's shape";
            Pack: "the inputs stacked along a new axis";
            PadV3: "x surrounded by a constant (mode constant) or its own elements (reflect, symmetric, edge) on each axis (paddings before/after)";
            PadV3Grad: "the gradient of PadV3 in modes reflect, edge, symmetric: each gradient added into the element it was read from";
            Pow: "x1 to the power x2, broadcast";
            Range: "start, start + delta, ... below limit";
            RealDiv: "x1 / x2, broadcast, in floating point";
            Reciprocal: "1 / x";
            ReduceAll: "and over axes (keep_dims)";
            ReduceAny: "or over axes (keep_dims)";
            ReduceMax: "maximum over axes (keep_dims)";
            ReduceMean: "mean over axes (keep_dims)";
            ReduceMin: "minimum over axes (keep_dims)";
            ReduceSum: "sum over axes (keep_dims)";
            Relu: "max(x, 0)";
            ReluGrad: "the gradient where the feature is positive, else 0";
            ResizeBilinearV2: "NCHW images resized bilinearly to size (align_corners, half_pixel_centers)";
            ResizeBilinearV2Grad: "the gradient of ResizeBilinearV2 into original_image's shape";
            ResizeD: "the last axis resized linearly (mode linear) or the last two bicubically (mode cubic) to sizes (coordinate_transformation_mode half_pixel or align_corners)";
            ResizeGradD: "the gradient of ResizeD into original_size (mode cubic: grads and y in HWNC)";
            ResizeNearestNeighborV2: "NCHW images resized to size by nearest neighbour (align_corners, half_pixel_centers)";
            ResizeNearestNeighborV2Grad: "the gradient of ResizeNearestNeighborV2 into size";
            ReverseV2: "x with the order of each listed axis reversed: flip";
            RmsNorm: "rows times 1/sqrt(mean(x^2) + epsilon) and gamma; outputs y and rstd";
            RmsNormGrad: "the gradients of RmsNorm from dy, x, rstd, gamma: dx, dgamma";
            Rsqrt: "1 / sqrt(x)";
            ScatterElements: "data with the elements indices name along axis set to (reduction add/mul: combined with) updates: scatter";
            Select: "x1 where condition is true, else x2, broadcast: torch.where";
            Sigmoid: "1 / (1 + exp(-x))";
            SigmoidCrossEntropyWithLogitsGradV2: "the gradient of SigmoidCrossEntropyWithLogitsV2";
            SigmoidCrossEntropyWithLogitsV2: "binary cross-entropy of logits with weight and pos_weight, reduced (reduction none/mean/sum)";
            SigmoidGrad: "dy * y * (1 - y), y the sigmoid";
            SiluGrad: "the gradient of SiLU (Swish of scale 1) at x";
            Sin: "sin x, in floating point";
            Slice: "the block at offsets of a size";
            SmoothL1LossGradV2: "the gradient of SmoothL1LossV2";
            SmoothL1LossV2: "(x - t)^2 / (2 sigma) where |x - t| < sigma, else |x - t| - sigma / 2, reduced (reduction none/mean/sum)";
            SoftMarginLoss: "ln(1 + exp(-t * x)), reduced (reduction none/mean/sum)";
            SoftMarginLossGrad: "the gradient of SoftMarginLoss: -t * sigmoid(-t * x) * dy";
            SoftmaxGrad: "y * (dy - sum(dy * y)) along axes";
            SoftmaxV2: "exp(x) / sum(exp(x)) along axes (one axis)";
            SoftplusV2: "ln(1 + exp(beta * x)) / beta, x above threshold";
            SoftplusV2Grad: "the gradient of SoftplusV2";
            Sort: "values sorted along axis (descending), stable, NaN largest, and their int32 indices";
            Sqrt: "the square root of x";
            Square: "x * x";
            StatelessDropOutGenMask: "a dropout bit mask of shape's elements, each kept with probability keep_prob, from seed, seed1 and offset (reproducible; not an NPU's numbers)";
            StatelessRandomNormalV2: "standard normal values from a key and counter (reproducible; not an NPU's numbers)";
            StatelessRandomUniformV2: "uniform values in [0, 1) from a key and counter (reproducible; not an NPU's numbers)";
            StridedSlice: "begin:end:strides per axis (masks 0 but shrink_axis_mask)";
            Sub: "x1 - x2, broadcast";
            Swish: "x * sigmoid(scale * x): SiLU";
            Tanh: "the hyperbolic tangent";
            TanhGrad: "dy * (1 - y^2), y the tanh";
            TensorEqual: "same shape and every element equal (bool [1])";
            ThresholdGradV2D: "the gradient where the feature is above threshold, else 0";
            ThresholdV2D: "x above threshold, else value";
            TopKV2: "the k largest (largest false: smallest) elements along dim, sorted, stable, NaN largest, and their int32 indices";
            Transpose: "axes permuted by perm";
            Tril: "each matrix's elements on and below the diagonal-th diagonal, the rest 0";
            Triu: "each matrix's elements on and above the diagonal-th diagonal, the rest 0";
            UpsampleNearest3d: "NCDHW volumes resized to output_size by nearest neighbour";
            UpsampleNearest3dGrad: "the gradient of UpsampleNearest3d into input_size";
            UpsampleTrilinear3d: "NCDHW volumes resized trilinearly to output_size (align_corners)";
            UpsampleTrilinear3dGrad: "the gradient of UpsampleTrilinear3d into input_size";
            ViewCopy: "a strided view of src written into a strided view of dst";
            ZerosLike: "zeros of x's shape";
        }
    };
}
