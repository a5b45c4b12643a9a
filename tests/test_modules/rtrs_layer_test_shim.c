// SPDX-License-Identifier: GPL-2.0
/* The shared layer's C shim, linked into this module (see rust/shim.c). */
#include "../../rust/shim.c"

/* The kernel types the layer and the kernel crate embed in Rust structs, in
 * the order of the layer test's CType. */
enum rtrs_test_ctype {
	RTRS_T_RAW_SPINLOCK = 0, RTRS_T_SPINLOCK = 1, RTRS_T_MUTEX = 2, RTRS_T_LOCAL_LOCK = 3,
	RTRS_T_WAIT_QUEUE_HEAD = 4, RTRS_T_HRTIMER = 5, RTRS_T_LOCK_CLASS_KEY = 6,
};

/* sizeof(t) and its alignment as C lays it out: 0 for a type it does not know. */
size_t rtrs_test_c_layout(enum rtrs_test_ctype t, size_t *align);
size_t rtrs_test_c_layout(enum rtrs_test_ctype t, size_t *align)
{
#define RTRS_LAYOUT(type) do { *align = __alignof__(type); return sizeof(type); } while (0)
	switch (t) {
	case RTRS_T_RAW_SPINLOCK: RTRS_LAYOUT(raw_spinlock_t);
	case RTRS_T_SPINLOCK: RTRS_LAYOUT(spinlock_t);
	case RTRS_T_MUTEX: RTRS_LAYOUT(struct mutex);
	case RTRS_T_LOCAL_LOCK: RTRS_LAYOUT(local_lock_t);
	case RTRS_T_WAIT_QUEUE_HEAD: RTRS_LAYOUT(struct wait_queue_head);
	case RTRS_T_HRTIMER: RTRS_LAYOUT(struct hrtimer);
	case RTRS_T_LOCK_CLASS_KEY: RTRS_LAYOUT(struct lock_class_key);
	}
#undef RTRS_LAYOUT
	*align = 0;
	return 0;
}
