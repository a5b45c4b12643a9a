/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rtedu: device-interrupt latency on QEMU's edu PCI device (/dev/rtedu<N>).
 *
 * /dev/rtedu<N> speaks the measuring ioctls, records and read()/poll()
 * semantics of <linux/rtlat.h> (one channel, numbered 0; the user stage is
 * measured by read() itself, so RTLAT_IOC_USER_WAIT is ENOTTY), plus the
 * device ioctls below. Same conventions as rtlat.h: size and version first,
 * explicit widths, no implicit padding, reserved fields zero (EINVAL
 * otherwise). See Documentation/rtedu.rst.
 */
#ifndef _UAPI_LINUX_RTEDU_H
#define _UAPI_LINUX_RTEDU_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define RTEDU_VERSION		1
#define RTEDU_DMA_MAX		4096	/* the edu device's buffer */
#define RTEDU_FACTORIAL_MAX	12	/* 13! does not fit in a __u32 */

enum rtedu_irq_type {
	RTEDU_IRQ_INTX = 0,
	RTEDU_IRQ_MSI = 1,
	RTEDU_IRQ_MSIX = 2,
};

struct rtedu_info {
	__u32 size;			/* sizeof(struct rtedu_info) */
	__u32 version;			/* RTEDU_VERSION */
	__u32 instance;			/* N of /dev/rtedu<N> */
	__u32 ident;			/* identification register, 0xRRrr00ed */
	__u32 pci_domain;		/* PCI address of the device */
	__u32 pci_devid;		/* bus << 8 | devfn */
	__u32 irq;			/* Linux interrupt number */
	__u32 irq_type;			/* enum rtedu_irq_type */
	__s32 irq_thread_tid;		/* 0 until the IRQ thread first ran */
	__u32 irq_thread_prio;		/* SCHED_FIFO priority applied to it */
	__u32 dma_bits;			/* DMA mask width; 0: DMA unavailable */
	__u32 reserved;			/* out: 0 */
	__u64 irqs;			/* interrupts handled (hard-IRQ half) */
	__u64 spurious;			/* interrupts on the line that were not ours */
};

struct rtedu_factorial {
	__u32 size;
	__u32 version;
	__u32 n;			/* in: 0..RTEDU_FACTORIAL_MAX */
	__u32 result;			/* out: n!, computed by the device */
};

struct rtedu_dma {
	__u32 size;
	__u32 version;
	__u64 buf_ptr;			/* in/out: user buffer of len bytes */
	__u32 len;			/* 1..RTEDU_DMA_MAX */
	__u32 reserved;			/* in: 0 (EINVAL otherwise) */
	__u64 to_dev_ns;		/* out: RAM -> device, start to interrupt */
	__u64 from_dev_ns;		/* out: device -> RAM, start to interrupt */
};

#define RTEDU_IOC_MAGIC		0xb8
#define RTEDU_IOC_INFO		_IOR(RTEDU_IOC_MAGIC, 1, struct rtedu_info)
#define RTEDU_IOC_FACTORIAL	_IOWR(RTEDU_IOC_MAGIC, 2, struct rtedu_factorial)
#define RTEDU_IOC_DMA		_IOWR(RTEDU_IOC_MAGIC, 3, struct rtedu_dma)

#endif /* _UAPI_LINUX_RTEDU_H */
