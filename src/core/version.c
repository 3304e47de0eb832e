#include "voxlabel/voxlabel.h"

const char *vl_version(void)
{
    return VL_VERSION;
}
