/** \file
 * xchg/xchg.h — everything: include this one header to use the library. */
#ifndef XCHG_XCHG_H
#define XCHG_XCHG_H

#include "xchg/arrow_c.h"
#include "xchg/buf.h"
#include "xchg/cache.h"
#include "xchg/codec.h"
#include "xchg/error.h"
#include "xchg/io.h"
#include "xchg/ipc.h"
#include "xchg/pool.h"
#include "xchg/rows.h"
#include "xchg/shuffle.h"
#include "xchg/stream.h"
#include "xchg/writer.h"

#define XCHG_VERSION_MAJOR 0
#define XCHG_VERSION_MINOR 1
#define XCHG_VERSION_PATCH 0
#define XCHG_VERSION_STRING "0.1.0"

#endif
