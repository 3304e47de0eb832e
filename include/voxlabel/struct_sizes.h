/* voxlabel: the sizes of the public structs, so that a binding that mirrors them without a compiler (Python
 * ctypes) can refuse a library whose layout it does not match instead of corrupting memory. */
#ifndef VOXLABEL_STRUCT_SIZES_H
#define VOXLABEL_STRUCT_SIZES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sizeof the public struct named `type_name` ("vl_volume", "vl_label_options", ...), 0 when it is not one. */
size_t vl_struct_size(const char *type_name);

#ifdef __cplusplus
}
#endif
#endif
