/* A minimal dynamic-language binding of libmrt built on libffi, as an
 * interpreter's FFI module would be: the library is dlopen'ed, every function
 * is described by a signature string and called through ffi_call, struct
 * layouts are computed by libffi from field types, and C callbacks are
 * libffi closures. Nothing here is linked against libmrt.
 *
 * Signature strings: "<return>:<arguments>", one letter per type:
 *   v void   b bool   i int32_t (mrt_status, enums)   I int
 *   u uint32_t   l int64_t   L uint64_t   z size_t   p pointer   d double
 * Arguments of dyn_call() are passed as the C type of their letter (bool and
 * int32_t promoted to int as usual for variadic calls). */
#ifndef MRT_TESTS_FFI_DYNAMIC_BINDING_H
#define MRT_TESTS_FFI_DYNAMIC_BINDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ffi.h>

/* The return value of a call, read as the signature's return type. */
typedef union dyn_value {
  bool b;
  int32_t i;
  int I;
  uint32_t u;
  int64_t l;
  uint64_t L;
  size_t z;
  void *p;
  double d;
} dyn_value;

/* Opens the library at path (RTLD_NOW | RTLD_LOCAL); exits on failure. */
void dyn_open(const char *path);

/* Closes the library (after which no function may be called). */
void dyn_close(void);

/* Calls the library function `name`, which must be in the binding's table
 * (dynamic_binding.c) with its signature; exits if it is not. */
dyn_value dyn_call(const char *name, ...);

/* The number of distinct library functions dyn_call has called, and their
 * names (printed by dyn_print_coverage). */
int dyn_distinct_functions_called(void);
bool dyn_was_called(const char *name);
void dyn_print_coverage(void);

/* ---- struct layouts from libffi ---- */

/* A C struct described by the signature letters of its fields, laid out by
 * libffi (ffi_get_struct_offsets) as the platform's C ABI does. */
typedef struct dyn_struct {
  const char *name;
  const char *fields; /* e.g. "ppL" for mrt_tensor_view */
  ffi_type type;
  ffi_type *elements[40];
  size_t offsets[40];
  size_t count;
} dyn_struct;

/* Computes the layout; exits if libffi refuses it. */
void dyn_struct_layout(dyn_struct *layout);

/* Field access on a struct instance at `base` (memcpy, no alignment needs). */
void dyn_set(const dyn_struct *layout, void *base, size_t field, const void *value, size_t size);
void dyn_get(const dyn_struct *layout, const void *base, size_t field, void *value, size_t size);
void *dyn_get_ptr(const dyn_struct *layout, const void *base, size_t field);
uint64_t dyn_get_u64(const dyn_struct *layout, const void *base, size_t field);
int64_t dyn_get_i64(const dyn_struct *layout, const void *base, size_t field);
int32_t dyn_get_i32(const dyn_struct *layout, const void *base, size_t field);
bool dyn_get_bool(const dyn_struct *layout, const void *base, size_t field);
double dyn_get_f64(const dyn_struct *layout, const void *base, size_t field);
void dyn_set_ptr(const dyn_struct *layout, void *base, size_t field, const void *value);
void dyn_set_u64(const dyn_struct *layout, void *base, size_t field, uint64_t value);
void dyn_set_size(const dyn_struct *layout, void *base, size_t field, size_t value);

/* ---- callbacks as libffi closures ---- */

/* A C function pointer of signature `signature` that calls handler(cif,
 * return value, argument pointers, context). */
typedef struct dyn_closure {
  ffi_cif cif;
  ffi_type *arg_types[8];
  ffi_closure *closure;
  void *code; /* the callable function pointer */
} dyn_closure;

void dyn_closure_create(dyn_closure *closure, const char *signature,
                        void (*handler)(ffi_cif *cif, void *ret, void **args, void *context),
                        void *context);
void dyn_closure_destroy(dyn_closure *closure);

#endif
