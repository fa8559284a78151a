/* The libffi layer of the consumer test: see dynamic_binding.h. */
#include "dynamic_binding.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every libmrt function the test calls, with its C signature as written in
 * mrt_c.h. A dynamic-language binding carries exactly this kind of table. */
typedef struct dyn_function {
  const char *name;
  const char *signature;
  void (*address)(void);
  ffi_cif cif;
  ffi_type *arg_types[8];
  unsigned num_args;
  long calls;
} dyn_function;

static dyn_function functions[] = {
    {"mrt_version_string", "p:", NULL, {0}, {0}, 0, 0},
    {"mrt_version", "v:ppp", NULL, {0}, {0}, 0, 0},
    {"mrt_check_version", "i:II", NULL, {0}, {0}, 0, 0},
    {"mrt_status_string", "p:i", NULL, {0}, {0}, 0, 0},
    {"mrt_last_error_message", "p:", NULL, {0}, {0}, 0, 0},
    {"mrt_last_error_message_copy", "i:pzp", NULL, {0}, {0}, 0, 0},
    {"mrt_set_log_level", "i:i", NULL, {0}, {0}, 0, 0},
    {"mrt_get_log_level", "I:", NULL, {0}, {0}, 0, 0},
    {"mrt_set_log_callback", "i:ppp", NULL, {0}, {0}, 0, 0},
    {"mrt_log_message", "i:ip", NULL, {0}, {0}, 0, 0},
    {"mrt_model_load", "i:pzp", NULL, {0}, {0}, 0, 0},
    {"mrt_model_destroy", "v:p", NULL, {0}, {0}, 0, 0},
    {"mrt_model_get_info", "i:pp", NULL, {0}, {0}, 0, 0},
    {"mrt_model_anchor_by_name", "i:ppp", NULL, {0}, {0}, 0, 0},
    {"mrt_model_tensor_data", "i:pppp", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_config_init_sized", "i:pz", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_create", "i:ppp", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_create_from_files", "i:pzpp", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_destroy", "v:p", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_execute_inputs", "i:ppp", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_execute_outputs", "i:ppp", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_model_inputs", "i:ppp", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_model_outputs", "i:ppp", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_execute", "i:ppzpzu", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_execute_async", "i:ppzpzup", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_execute_alloc", "i:ppzup", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_statistics_count", "i:pup", NULL, {0}, {0}, 0, 0},
    {"mrt_model_runner_insert_simulated_error", "i:pipu", NULL, {0}, {0}, 0, 0},
    {"mrt_tensor_memory_count", "i:pp", NULL, {0}, {0}, 0, 0},
    {"mrt_tensor_memory_get", "i:pzp", NULL, {0}, {0}, 0, 0},
    {"mrt_tensor_memory_find", "i:ppp", NULL, {0}, {0}, 0, 0},
    {"mrt_tensor_memory_destroy", "v:p", NULL, {0}, {0}, 0, 0},
    {"mrt_future_is_ready", "b:p", NULL, {0}, {0}, 0, 0},
    {"mrt_future_wait", "i:pl", NULL, {0}, {0}, 0, 0},
    {"mrt_future_status", "i:pp", NULL, {0}, {0}, 0, 0},
    {"mrt_future_error_message", "p:p", NULL, {0}, {0}, 0, 0},
    {"mrt_future_on_ready", "i:pppp", NULL, {0}, {0}, 0, 0},
    {"mrt_future_destroy", "v:p", NULL, {0}, {0}, 0, 0},
};
enum { NUM_FUNCTIONS = sizeof functions / sizeof functions[0] };

static void *library;

static void die(const char *fmt, const char *what) {
  fprintf(stderr, "dynamic binding: ");
  fprintf(stderr, fmt, what);
  fprintf(stderr, "\n");
  exit(EXIT_FAILURE);
}

static ffi_type *type_of(char letter) {
  switch (letter) {
    case 'v': return &ffi_type_void;
    case 'b': return &ffi_type_uint8; /* C bool on the x86-64 and AArch64 ABIs */
    case 'i': return &ffi_type_sint32;
    case 'I': return &ffi_type_sint;
    case 'u': return &ffi_type_uint32;
    case 'l': return &ffi_type_sint64;
    case 'L': return &ffi_type_uint64;
    case 'z': return sizeof(size_t) == 8 ? &ffi_type_uint64 : &ffi_type_uint32;
    case 'p': return &ffi_type_pointer;
    case 'd': return &ffi_type_double;
    default: return NULL;
  }
}

/* Fills types from the letters after ':' and returns their count. */
static unsigned parse_arguments(const char *signature, ffi_type **types, unsigned max) {
  const char *colon = strchr(signature, ':');
  if (colon == NULL) die("signature '%s' lacks ':'", signature);
  unsigned count = 0;
  for (const char *c = colon + 1; *c; ++c) {
    if (count == max) die("signature '%s' has too many arguments", signature);
    if ((types[count++] = type_of(*c)) == NULL || *c == 'v') die("bad argument type in '%s'", signature);
  }
  return count;
}

void dyn_open(const char *path) {
  library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) die("dlopen failed: %s", dlerror());
}

void dyn_close(void) {
  if (dlclose(library) != 0) die("dlclose failed: %s", dlerror());
  library = NULL;
}

static dyn_function *prepare(const char *name) {
  for (int i = 0; i < NUM_FUNCTIONS; ++i) {
    dyn_function *f = &functions[i];
    if (strcmp(f->name, name) != 0) continue;
    if (f->address == NULL) {
      void *symbol = dlsym(library, name);
      if (symbol == NULL) die("dlsym: libmrt does not export %s", name);
      /* POSIX guarantees dlsym's result converts to a function pointer. */
      memcpy(&f->address, &symbol, sizeof f->address);
      f->num_args = parse_arguments(f->signature, f->arg_types, 8);
      if (ffi_prep_cif(&f->cif, FFI_DEFAULT_ABI, f->num_args, type_of(f->signature[0]), f->arg_types) != FFI_OK)
        die("ffi_prep_cif failed for %s", name);
    }
    return f;
  }
  die("%s is not in the binding's table", name);
  return NULL;
}

typedef union dyn_argument {
  uint8_t b;
  int32_t i;
  int I;
  uint32_t u;
  int64_t l;
  uint64_t L;
  size_t z;
  void *p;
  double d;
} dyn_argument;

dyn_value dyn_call(const char *name, ...) {
  dyn_function *f = prepare(name);
  dyn_argument values[8];
  void *pointers[8];
  const char *letters = strchr(f->signature, ':') + 1;
  va_list ap;
  va_start(ap, name);
  for (unsigned k = 0; k < f->num_args; ++k) {
    switch (letters[k]) {
      case 'b': values[k].b = (uint8_t)(va_arg(ap, int) != 0); break;
      case 'i': values[k].i = (int32_t)va_arg(ap, int); break;
      case 'I': values[k].I = va_arg(ap, int); break;
      case 'u': values[k].u = (uint32_t)va_arg(ap, unsigned); break;
      case 'l': values[k].l = va_arg(ap, int64_t); break;
      case 'L': values[k].L = va_arg(ap, uint64_t); break;
      case 'z': values[k].z = va_arg(ap, size_t); break;
      case 'p': values[k].p = va_arg(ap, void *); break;
      case 'd': values[k].d = va_arg(ap, double); break;
      default: die("bad argument letter in %s", name);
    }
    pointers[k] = &values[k];
  }
  va_end(ap);

  /* libffi widens integral return values narrower than a register to
   * ffi_arg: read them back through it. */
  union {
    ffi_arg a;
    ffi_sarg s;
    uint64_t L;
    int64_t l;
    void *p;
    double d;
  } raw;
  memset(&raw, 0, sizeof raw);
  ffi_call(&f->cif, f->address, &raw, pointers);
  f->calls++;

  dyn_value result;
  memset(&result, 0, sizeof result);
  switch (f->signature[0]) {
    case 'v': break;
    case 'b': result.b = (uint8_t)raw.a != 0; break;
    case 'i': result.i = (int32_t)raw.s; break;
    case 'I': result.I = (int)raw.s; break;
    case 'u': result.u = (uint32_t)raw.a; break;
    case 'l': result.l = raw.l; break;
    case 'L': result.L = raw.L; break;
    case 'z': result.z = (size_t)raw.L; break;
    case 'p': result.p = raw.p; break;
    case 'd': result.d = raw.d; break;
    default: die("bad return letter in %s", name);
  }
  return result;
}

int dyn_distinct_functions_called(void) {
  int count = 0;
  for (int i = 0; i < NUM_FUNCTIONS; ++i) count += functions[i].calls > 0;
  return count;
}

bool dyn_was_called(const char *name) {
  for (int i = 0; i < NUM_FUNCTIONS; ++i)
    if (strcmp(functions[i].name, name) == 0) return functions[i].calls > 0;
  return false;
}

void dyn_print_coverage(void) {
  printf("libffi consumer: %d distinct libmrt functions called through ffi_call:\n",
         dyn_distinct_functions_called());
  for (int i = 0; i < NUM_FUNCTIONS; ++i)
    if (functions[i].calls > 0) printf("  %-42s %ld call(s)\n", functions[i].name, functions[i].calls);
  for (int i = 0; i < NUM_FUNCTIONS; ++i)
    if (functions[i].calls == 0) printf("  (not called: %s)\n", functions[i].name);
}

/* ---- struct layouts ---- */

void dyn_struct_layout(dyn_struct *layout) {
  layout->count = strlen(layout->fields);
  if (layout->count + 1 > sizeof layout->elements / sizeof layout->elements[0])
    die("struct %s has too many fields", layout->name);
  for (size_t k = 0; k < layout->count; ++k)
    if ((layout->elements[k] = type_of(layout->fields[k])) == NULL || layout->fields[k] == 'v')
      die("bad field type in struct %s", layout->name);
  layout->elements[layout->count] = NULL;
  layout->type.size = 0;
  layout->type.alignment = 0;
  layout->type.type = FFI_TYPE_STRUCT;
  layout->type.elements = layout->elements;
  if (ffi_get_struct_offsets(FFI_DEFAULT_ABI, &layout->type, layout->offsets) != FFI_OK)
    die("ffi_get_struct_offsets failed for %s", layout->name);
}

void dyn_set(const dyn_struct *layout, void *base, size_t field, const void *value, size_t size) {
  memcpy((char *)base + layout->offsets[field], value, size);
}

void dyn_get(const dyn_struct *layout, const void *base, size_t field, void *value, size_t size) {
  memcpy(value, (const char *)base + layout->offsets[field], size);
}

void *dyn_get_ptr(const dyn_struct *layout, const void *base, size_t field) {
  void *value;
  dyn_get(layout, base, field, &value, sizeof value);
  return value;
}

uint64_t dyn_get_u64(const dyn_struct *layout, const void *base, size_t field) {
  uint64_t value;
  dyn_get(layout, base, field, &value, sizeof value);
  return value;
}

int64_t dyn_get_i64(const dyn_struct *layout, const void *base, size_t field) {
  int64_t value;
  dyn_get(layout, base, field, &value, sizeof value);
  return value;
}

int32_t dyn_get_i32(const dyn_struct *layout, const void *base, size_t field) {
  int32_t value;
  dyn_get(layout, base, field, &value, sizeof value);
  return value;
}

bool dyn_get_bool(const dyn_struct *layout, const void *base, size_t field) {
  uint8_t value;
  dyn_get(layout, base, field, &value, sizeof value);
  return value != 0;
}

double dyn_get_f64(const dyn_struct *layout, const void *base, size_t field) {
  double value;
  dyn_get(layout, base, field, &value, sizeof value);
  return value;
}

void dyn_set_ptr(const dyn_struct *layout, void *base, size_t field, const void *value) {
  dyn_set(layout, base, field, &value, sizeof value);
}

void dyn_set_u64(const dyn_struct *layout, void *base, size_t field, uint64_t value) {
  dyn_set(layout, base, field, &value, sizeof value);
}

void dyn_set_size(const dyn_struct *layout, void *base, size_t field, size_t value) {
  dyn_set(layout, base, field, &value, sizeof value);
}

/* ---- closures ---- */

void dyn_closure_create(dyn_closure *closure, const char *signature,
                        void (*handler)(ffi_cif *cif, void *ret, void **args, void *context),
                        void *context) {
  unsigned count = parse_arguments(signature, closure->arg_types, 8);
  if (ffi_prep_cif(&closure->cif, FFI_DEFAULT_ABI, count, type_of(signature[0]), closure->arg_types) != FFI_OK)
    die("ffi_prep_cif failed for closure %s", signature);
  closure->closure = ffi_closure_alloc(sizeof(ffi_closure), &closure->code);
  if (closure->closure == NULL) die("ffi_closure_alloc failed for %s", signature);
  if (ffi_prep_closure_loc(closure->closure, &closure->cif, handler, context, closure->code) != FFI_OK)
    die("ffi_prep_closure_loc failed for %s", signature);
}

void dyn_closure_destroy(dyn_closure *closure) {
  ffi_closure_free(closure->closure);
  closure->closure = NULL;
  closure->code = NULL;
}
