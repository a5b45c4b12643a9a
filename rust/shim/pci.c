// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/pci.rs: PCI addresses. Compiled as part of rust/shim.c.
 */
#include <linux/pci.h>

#include "../shim.h"

/* pci_domain_nr(pdev->bus): the PCI domain (segment) of a device. */
int rtrs_pci_domain_nr(struct pci_dev *pdev)
{
	return pci_domain_nr(pdev->bus);
}
