// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/file.rs: a module's own file operations. Compiled as
 * part of rust/shim.c.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>

#include "../shim.h"

/*
 * Give @f this module's own copy of its file_operations, from ->open():
 *  - with .owner = THIS_MODULE, so the VFS holds the module while @f is open
 *    (Linux 7.2's Rust MiscDevice leaves fops->owner NULL; 7.3 sets it, and
 *    then the reference the VFS took at open is the one it drops at close);
 *  - with .poll = @poll when non-NULL (7.3's MiscDevice has no poll hook).
 * The copy is made once per module, of the first file's operations: one
 * device type per module. A file of another type (other operations or
 * another @poll) would get the first type's: it is refused, -EINVAL, with a
 * warning. Returns 0, or -ENODEV if the module is going away.
 */
int rtrs_file_setup(struct file *f,
		    __poll_t (*poll)(struct file *, struct poll_table_struct *))
{
	static struct file_operations fops;
	static const struct file_operations *from;
	static DEFINE_MUTEX(lock);
	bool held = !f->f_op->owner;
	int ret = 0;

	if (held && !try_module_get(THIS_MODULE))
		return -ENODEV;
	mutex_lock(&lock);
	if (!fops.owner) {
		from = f->f_op;
		fops = *f->f_op;
		fops.owner = THIS_MODULE;
		fops.poll = poll;
	} else if (WARN_ONCE(from != f->f_op || fops.poll != poll,
			     "rtrs: a second device type in one module\n")) {
		ret = -EINVAL;
	}
	mutex_unlock(&lock);
	if (ret) {
		if (held)
			module_put(THIS_MODULE);
		return ret;
	}
	f->f_op = &fops;
	return 0;
}
