// SPDX-License-Identifier: GPL-2.0
/* The shared layer's C shim, linked into this module (see rust/shim.c). */
#include "../../rust/shim.c"
