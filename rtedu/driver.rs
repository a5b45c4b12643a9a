// SPDX-License-Identifier: GPL-2.0

//! The PCI driver: probe (BAR, DMA mask and buffer, interrupt vectors, the
//! instance and its device file) and unbind.

use kernel::{
    device::Core,
    dma::{
        Coherent,
        Device as _,
        DmaMask, //
    },
    io::Io,
    miscdevice::{
        MiscDeviceOptions,
        MiscDeviceRegistration, //
    },
    pci,
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
    sync::Arc,
};

use crate::{
    file::RteduFile,
    irq::EduIrq,
    module_parameters,
    regs::{
        self,
        Bar0, //
    },
    rtrs::{
        self,
        file::FileOps,
        irq::{
            self as rt_irq,
            IrqThread,
            ThreadedIrq, //
        },
        measure::{
            Readers,
            Sessions, //
        },
        pci::EnabledMaster,
    },
    session::EduInstance,
    INSTANCES, MAX_INSTANCES, NAMES,
};

/// An instance slot in `INSTANCES`; freed when dropped.
struct Slot(usize);

/// Claimed slots, a bit each; changed under the `INSTANCES` lock.
static CLAIMED: Atomic<u32> = Atomic::new(0);

impl Slot {
    fn claim() -> Result<Self> {
        let _serial = INSTANCES.lock();
        let claimed = CLAIMED.load(Relaxed);
        let free = (0..MAX_INSTANCES)
            .find(|i| claimed & (1 << i) == 0)
            .ok_or(EBUSY)?;
        CLAIMED.store(claimed | (1 << free), Relaxed);
        Ok(Self(free))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut instances = INSTANCES.lock();
        instances[self.0] = None;
        CLAIMED.store(CLAIMED.load(Relaxed) & !(1 << self.0), Relaxed);
    }
}

pub(crate) struct RteduDriver;

/// QEMU's edu device.
const EDU_ID: pci::DeviceId = rtrs::pci::device_id(0x1234, 0x11e8);

kernel::pci_device_table!(
    PCI_TABLE,
    <RteduDriver as pci::Driver>::IdInfo,
    [(EDU_ID, ())]
);

/// Driver data of a bound device. Fields drop in order: the device file
/// first, then the interrupt, then the vectors, and the device is disabled
/// last. `irq` must stay declared before `vectors`: the interrupt is freed
/// (`free_irq`) before its vectors (`pci_free_irq_vectors`). `enabled`
/// must stay declared last: it is initialised first, so a probe that fails
/// drops it last too.
#[pin_data(PinnedDrop)]
pub(crate) struct RteduData<'bound> {
    #[pin]
    misc: MiscDeviceRegistration<FileOps<RteduFile>>,
    #[pin]
    irq: ThreadedIrq<'bound, EduIrq>,
    vectors: pci::IrqVectorRegistration<'bound>,
    inst: Arc<EduInstance>,
    slot: Slot,
    enabled: EnabledMaster<'bound>,
}

#[pinned_drop]
impl PinnedDrop for RteduData<'_> {
    fn drop(self: Pin<&mut Self>) {
        // `RteduDriver::unbind` detached the instance.
        pr_info!("rtedu{}: unbound\n", self.inst.index);
    }
}

/// Checks that the device is an edu device that answers.
fn check_device(pdev: &pci::Device<Core<'_>>, bar: &Bar0<'_>) -> Result<u32> {
    let ident = bar.read32(regs::IDENT);
    if ident & 0xffff != 0x00ed {
        dev_err!(
            pdev.as_ref(),
            "not an edu device: identification register reads {:#010x}, expected 0xRRrr00ed\n",
            ident
        );
        return Err(ENODEV);
    }
    for pattern in [0x1234_5678u32, 0xa5a5_0f0f] {
        bar.write32(pattern, regs::LIVENESS);
        let back = bar.read32(regs::LIVENESS);
        if back != !pattern {
            dev_err!(
                pdev.as_ref(),
                "edu liveness check failed: wrote {:#010x}, read {:#010x}, expected {:#010x}\n",
                pattern,
                back,
                !pattern
            );
            return Err(ENODEV);
        }
    }
    Ok(ident)
}

impl pci::Driver for RteduDriver {
    type IdInfo = ();
    type Data<'bound> = RteduData<'bound>;

    const ID_TABLE: pci::IdTable<Self::IdInfo> = &PCI_TABLE;

    /// Before the driver data is dropped, with the device still reachable.
    fn unbind<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>) {
        this.inst.detach(rtrs::pci::sleepable(pdev), pdev);
    }

    fn probe<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        _info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        pin_init::pin_init_scope(move || {
            // From here on, a failed probe turns bus mastering off and
            // disables the device again.
            let enabled = EnabledMaster::new(pdev)?;
            let bar = pdev.iomap_region_sized::<{ regs::END }>(0, c"rtedu")?;
            let ident = check_device(pdev, &bar)?;
            let bar = bar.into_devres()?;

            // DMA: the device handles `dma_bits` address bits.
            let bits = dma_bits_param();
            let dma = match DmaMask::try_new(bits) {
                // SAFETY: Nothing else allocates or maps DMA for this
                // device during probe.
                Ok(mask) => unsafe { pdev.dma_set_mask_and_coherent(mask) }
                    .and_then(|()| {
                        Coherent::<u8>::zeroed_slice(pdev.as_ref(), regs::DMA_BUF_SIZE, GFP_KERNEL)
                    })
                    .inspect_err(|e| {
                        dev_warn!(
                            pdev.as_ref(),
                            "DMA unavailable with a {}-bit mask ({:?}): load rtedu with the dma_bits= that matches QEMU's edu dma_mask=\n",
                            bits,
                            e
                        )
                    })
                    .ok(),
                Err(_) => None,
            };
            let dma_ok = dma.is_some();

            // MSI where available, INTx otherwise.
            let vectors = pdev.alloc_irq_vectors(
                1,
                1,
                pci::IrqTypes::default()
                    .with(pci::IrqType::Msi)
                    .with(pci::IrqType::Intx),
            )?;
            let vector = vectors.index(0)?;
            let (irq_type, type_name) = match vector.irq_type() {
                pci::IrqType::Intx => (0, "INTx"),
                pci::IrqType::Msi => (1, "MSI"),
                pci::IrqType::MsiX => (2, "MSI-X"),
            };
            let irq = kernel::irq::IrqRequest::from(vector).irq();

            let slot = Slot::claim()?;
            let index = slot.0;
            let inst = Arc::pin_init(
                try_pin_init!(EduInstance {
                    index: index as u32,
                    ident,
                    pci_domain: rtrs::pci::domain_nr(pdev),
                    pci_devid: u32::from(pdev.dev_id()),
                    irq,
                    irq_type,
                    dma_bits: if dma_ok { bits } else { 0 },
                    bar,
                    gone: Atomic::new(false),
                    pending: Atomic::new(0),
                    probe_irq_ns: Atomic::new(0),
                    irqs: Atomic::new(0),
                    spurious: Atomic::new(0),
                    irq_thread: IrqThread::new(module_parameters::irq_priority.value()),
                    // The readers' queue outlives sessions and unbind: every
                    // open file holds the instance.
                    sessions <- crate::new_task_mutex!({
                        let mut sh = Sessions::new();
                        sh.set_readers(Some(Readers::new()?));
                        sh
                    }),
                    active <- crate::new_task_mutex!(None),
                    ops <- crate::new_task_mutex!(dma),
                    done <- crate::new_task_mutex!(0),
                    done_cv <- crate::new_task_condvar!(),
                }),
                GFP_KERNEL,
            )?;
            INSTANCES.lock()[index] = Some(inst.clone());
            dev_info!(
                pdev.as_ref(),
                "rtedu{}: edu {}.{}, irq {} ({}), DMA {}\n",
                index,
                ident >> 24,
                (ident >> 16) & 0xff,
                irq,
                type_name,
                if dma_ok { "on" } else { "off" }
            );
            // INTx lines may be shared with other devices.
            let shared = irq_type == 0;
            Ok(try_pin_init!(&this in RteduData {
                // First in, last out on a failure.
                enabled,
                // The vectors next: the interrupt request borrows them.
                vectors,
                irq <- {
                    // SAFETY: `vectors` was written just above into the
                    // driver data, which stays pinned until it is dropped.
                    // The `'bound` the kernel's API asks for is what would
                    // make the compiler check that the interrupt is freed
                    // before its vectors; here the field order does: `irq`
                    // is declared before `vectors` (dropped first), and a
                    // failed initialisation drops in reverse order of
                    // initialisation (`irq` before `vectors` again). The
                    // reference itself is not kept: the request holds only
                    // the interrupt number.
                    let vectors: &'bound pci::IrqVectorRegistration<'bound> =
                        unsafe { &(*this.as_ptr()).vectors };
                    // SAFETY: The driver data is never leaked.
                    unsafe {
                        rt_irq::request(
                            vectors.index(0)?.into(),
                            shared,
                            c"rtedu",
                            EduIrq { inst: inst.clone() },
                        )
                    }
                },
                misc <- MiscDeviceRegistration::register(MiscDeviceOptions { name: NAMES[index] }),
                inst,
                slot,
            }))
        })
    }
}

/// The `dma_bits` parameter, limited to what a DMA mask can be.
fn dma_bits_param() -> u32 {
    module_parameters::dma_bits.value().clamp(28, 32)
}
