// conv2d.depthwise_mult: depthwise convolution with a channel multiplier k > 1 (groups == C,
// O = k * C: output channel o reads input channel o / k only), as MobileNet-style networks
// and ONNX exporters produce for "depth multiplier" layers. conv2d.depthwise covers k = 1;
// without this template such a layer went to conv2d.nchwc, which multiplies the zero
// weights of every other channel (C times the work).
//
// Blocked layouts like the direct templates (data NCHW[ic_bn]c, output NCHW[oc_bn]c, so a
// network needs no extra layout conversion); weights packed [O/oc_bn][KH][KW][oc_bn]. The
// register tile is reg_n pixels x oc_bn output channels over the KH x KW taps; each output
// lane reads its input channel o / k of the same pixel, so with oc_bn = k * ic_bn one
// output block reads exactly one input block.
#pragma once

#include "schedules/op_template.h"

namespace kiln::schedules {

const OpTemplate& conv2d_depthwise_mult_template();

// groups == C, O a multiple of C larger than C.
bool is_depthwise_multiplier(const Workload& w);

}  // namespace kiln::schedules
