#!/usr/bin/env python3
"""Lists ctorch's public functions that bypass the op dispatcher (issue 17, point 1).

Every public function declared with CTORCH_API in src/**/*.h must reach `ct__dispatch`, the one
entry (directly or through any function it calls or names), unless it is in the allowlist below:
accessors, constructors that run no kernel, and APIs that are not ops (scopes, errors, seeding,
module registration, timers, printing ...).

The call graph comes from the implementation as the compiler sees it: the C preprocessor expands
ctorch.h (regenerated from src/ by tools/amalgamate) with CTORCH_IMPLEMENTATION, so functions
that the parts define through macros (CT__BINARY_OP(add) -> ct_add) are seen too. A function's
edges are every function it calls or names (a callback such as a module's forward counts).

Usage: tools/check_dispatch.py [--cc CC] [--header ctorch.h] [--list]
Exit status 1 when a public function outside the allowlist bypasses the entry.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENTRY = "ct__dispatch"

# Public functions that may bypass the entry, by reason. Each runs no op kernel on tensor data
# of its own (or only calls public ops, which dispatch).
ALLOWLIST = {
    # nn/norm.c option defaults (values, no tensor)
    "norm options": """ct_batch_norm_defaults ct_batch_norm_module_defaults ct_instance_norm_defaults
        ct_instance_norm_module_defaults""",
    # nn/embedding.c option defaults (values, no tensor)
    "embedding options": "ct_embedding_defaults ct_embedding_bag_defaults",
    # nn/attention.c option defaults (values, no tensor)
    "attention options": "ct_scaled_dot_product_attention_defaults",
    # nn/transformer.c option defaults (values, no tensor)
    "transformer options": """ct_multihead_attention_defaults
        ct_multihead_attention_forward_defaults ct_transformer_layer_defaults""",
    # nn/kv_cache.c: the fill count and freeing (updates and reset copy with ops, which dispatch)
    "kv_cache": "ct_kv_cache_size ct_kv_cache_free",
    # tensor accessors and attributes (metadata; one element, as Tensor.item)
    "accessor": """ct_dim ct_size ct_sizes ct_stride ct_strides ct_storage_offset ct_numel
        ct_tensor_dtype ct_tensor_device ct_element_size ct_nbytes ct_data_ptr ct_is_contiguous
        ct_is_floating_point ct_is_signed ct_version ct_item ct_item_int64 ct_requires_grad
        ct_is_leaf ct_grad ct_grad_fn ct_node_name ct_result_type ct_untyped_storage
        ct_storage_nbytes ct_storage_data_ptr ct_is_set_to ct_is_contiguous_memory_format
        ct_is_nonzero ct_is_pinned""",
    # element callbacks: the caller's function per element on the CPU (Tensor.apply_ and map_
    # are no operators in PyTorch either)
    "callbacks": """ct_apply_ ct_map_""",
    # dtypes and devices (values, no tensor)
    "dtype": """ct_dtype_size ct_dtype_name ct_dtype_is_floating_point ct_dtype_is_signed
        ct_promote_types ct_can_cast ct_get_default_dtype ct_set_default_dtype ct_device_cpu
        ct_make_device ct_broadcast_shapes ct_set_default_device ct_get_default_device ct_finfo
        ct_iinfo ct_float_to_half ct_half_to_float ct_float_to_bfloat16 ct_bfloat16_to_float""",
    # references, scopes, autograd flags, wrapping memory without a kernel
    "lifetime": """ct_free ct_retain ct_release ct_keep ct_scope_begin ct_scope_end ct_scope_depth
        ct_from_blob ct_set_grad ct_requires_grad_ ct_retain_grad ct_detach_ ct_register_hook
        ct_remove_hook ct_autograd_queue_callback
        ct_no_grad_begin ct_no_grad_end ct_set_grad_enabled ct_is_grad_enabled ct_set_
        ct_inference_mode_begin ct_inference_mode_end ct_is_inference_mode_enabled
        ct_from_dlpack ct_to_dlpack""",
    # errors, debugging, allocator statistics and settings
    "errors": """ct_error ct_error_code ct_error_clear ct_error_set ct_status_str ct_set_error_handler
        ct_debug_report ct_empty_cache ct_memory_allocated ct_memory_cached
        ct_max_memory_allocated ct_reset_peak_memory_stats ct_set_alloc_context
        ct_arena_new ct_arena_malloc ct_arena_realloc ct_arena_free ct_arena_used ct_arena_peak
        ct_arena_plan""",
    # the dispatcher's own API: registry, hooks, backends
    "dispatcher": """ct_op_registry ct_op_find ct_dispatch_hook_push ct_dispatch_hook_pop
        ct_backend_register ct_backend_unregister ct_backend_register_kernel ct_dispatch_kernel""",
    # threads, inter-op tasks, floating point mode
    "threads": """ct_set_num_threads ct_get_num_threads ct_reset_num_threads
        ct_set_num_interop_threads ct_get_num_interop_threads ct_parallel_info
        ct_parallel_info_string ct_parallel_shutdown ct_fork ct_wait ct_set_flush_denormal""",
    # generators: objects and seeding (sampling is an op)
    "generators": """ct_manual_seed ct_default_generator ct_generator_new ct_generator_free
        ct_generator_manual_seed ct_generator_initial_seed ct_initial_seed ct_seed
        ct_set_rng_state ct_fork_rng_begin ct_fork_rng_end""",
    # process-wide settings
    "settings": """ct_use_deterministic_algorithms ct_are_deterministic_algorithms_enabled
        ct_is_deterministic_algorithms_warn_only_enabled""",
    # modules: construction, registration, traversal, modes; ct_module_forward calls the
    # module's forward through its pointer (the ops it runs dispatch)
    "modules": """ct_module_new ct_module_free ct_module_name ct_module_user ct_module_forward
        ct_module_register_parameter ct_module_register_buffer ct_module_register_module
        ct_module_parameters ct_module_named_parameters ct_module_get_parameter
        ct_module_child ct_module_num_children ct_module_train ct_module_eval
        ct_module_is_training ct_sequential_append ct_identity_new ct_module_buffers
        ct_module_named_buffers ct_module_children ct_module_named_modules
        ct_module_get_submodule ct_module_register_buffer_persistent ct_module_requires_grad_
        ct_module_apply ct_module_register_forward_pre_hook ct_module_register_forward_hook
        ct_module_register_full_backward_hook ct_hook_handle_remove ct_module_list_new
        ct_module_list_append ct_module_dict_new ct_module_dict_set ct_module_dict_get
        ct_parameter_list_new ct_parameter_list_append ct_parameter ct_module_state_dict
        ct_incompatible_keys_free ct_conv1d_forward ct_conv2d_forward
        ct_conv_transpose2d_forward ct_cosine_similarity_new ct_pairwise_distance_new""",
    # state_dicts: an ordered map holding tensor references (no kernel); the safetensors
    # readers move file bytes into tensors (as the npy reader)
    "state_dict": """ct_state_dict_new ct_state_dict_free ct_state_dict_set ct_state_dict_set_int
        ct_state_dict_set_double ct_state_dict_set_string ct_state_dict_get
        ct_state_dict_get_int ct_state_dict_get_double ct_state_dict_get_string
        ct_state_dict_contains ct_state_dict_remove ct_state_dict_len ct_state_dict_key
        ct_state_dict_kind ct_state_dict_update ct_state_dict_select ct_load ct_load_buffer
        ct_load_mmap ct_checkpoint_dict_load""",
    # loss modules: options only (ct_loss_forward runs the loss functions, which dispatch)
    "loss modules": """ct_cross_entropy_loss_new ct_nll_loss_new ct_mse_loss_new ct_l1_loss_new
        ct_bce_loss_new ct_bce_with_logits_loss_new ct_huber_loss_new ct_smooth_l1_loss_new
        ct_kl_div_loss_new""",
    # optimizers: options, construction, parameter groups, counters; ct_optimizer_step calls
    # the optimizer's step through its pointer (the ops it runs dispatch)
    "optim": """ct_sgd_defaults ct_adam_defaults ct_adamw_defaults ct_sgd_new ct_adam_new
        ct_adamw_new ct_optimizer_free ct_optimizer_get_lr ct_optimizer_set_lr
        ct_optimizer_add_param_group ct_optimizer_name ct_optimizer_num_param_groups
        ct_optimizer_params ct_optimizer_step_count ct_optimizer_step ct_rmsprop_defaults
        ct_adagrad_defaults ct_adadelta_defaults ct_adamax_defaults ct_nadam_defaults
        ct_radam_defaults ct_optimizer_get_momentum ct_optimizer_state_dict
        ct_optimizer_load_state_dict""",
    # amp/autocast.c: per-thread state and the op lists (the casts run in the entry itself)
    "autocast": """ct_autocast_begin ct_autocast_end ct_is_autocast_enabled ct_set_autocast_enabled
        ct_get_autocast_dtype ct_set_autocast_dtype ct_is_autocast_available ct_autocast_policy
        ct_autocast_cpu_lower_ops ct_autocast_cpu_fp32_ops ct_autocast_cpu_promote_ops
        ct_autocast_cuda_lower_ops ct_autocast_cuda_fp32_ops ct_autocast_cuda_promote_ops""",
    # amp/grad_scaler.c: options, lifetime, the scale's float32 arithmetic and state dicts
    # (scale, unscale_ and step run dispatched ops)
    "grad_scaler": """ct_grad_scaler_defaults ct_grad_scaler_new ct_grad_scaler_free
        ct_grad_scaler_get_scale ct_grad_scaler_is_enabled ct_grad_scaler_update
        ct_grad_scaler_state_dict ct_grad_scaler_load_state_dict""",
    # LR schedulers: arithmetic on the optimizer's per-group lrs (doubles, no tensor)
    "lr_scheduler": """ct_step_lr_new ct_multi_step_lr_new ct_exponential_lr_new
        ct_cosine_annealing_lr_new ct_cosine_annealing_warm_restarts_new ct_linear_lr_new
        ct_constant_lr_new ct_polynomial_lr_new ct_lambda_lr_new ct_multiplicative_lr_new
        ct_one_cycle_lr_defaults ct_one_cycle_lr_new ct_cyclic_lr_defaults ct_cyclic_lr_new
        ct_reduce_lr_on_plateau_defaults ct_reduce_lr_on_plateau_new
        ct_reduce_lr_on_plateau_step ct_sequential_lr_new ct_chained_scheduler_new
        ct_lr_scheduler_step ct_lr_scheduler_get_last_lr ct_lr_scheduler_last_epoch
        ct_lr_scheduler_free ct_lr_scheduler_state_dict ct_lr_scheduler_load_state_dict
        ct_swalr_new""",
    # options of ops and pure arithmetic on shapes
    "options": """ct_gradcheck_defaults ct_nll_loss_defaults ct_conv_defaults ct_init_calculate_gain
        ct_init_calculate_fan_in_and_fan_out ct_set_printoptions ct_get_printoptions
        ct_set_float32_matmul_precision ct_get_float32_matmul_precision
        ct_max_pool2d_defaults ct_avg_pool2d_defaults ct_fold_defaults ct_averaged_model_defaults
        ct_max_pool3d_defaults ct_avg_pool3d_defaults""",
    # data: readers and writers move file bytes to and from tensors (no op kernel); datasets
    # and loaders hold tensors; ct_dataset_get calls the dataset's get through its pointer
    # (a tensor dataset's get selects rows with ops, which dispatch)
    "data": """ct_npy_load ct_npy_save ct_npy_load_buffer ct_npy_save_buffer ct_idx_load
        ct_idx_load_buffer ct_tensor_dataset_new ct_dataset_get ct_dataset_len ct_dataset_free
        ct_dataset_is_tensor_dataset ct_dataloader_defaults ct_dataloader_new
        ct_dataloader_free ct_dataloader_len ct_dataloader_reset
        ct_dataloader_set_num_workers ct_dataloader_set_pin_memory ct_get_worker_info
        ct_seed_worker ct_chain_dataset_new
        ct_concat_dataset_new ct_iterable_dataset_free ct_iterable_dataset_iter
        ct_iterable_dataset_next ct_batch_sampler_new ct_distributed_sampler_defaults
        ct_sampler_free ct_sampler_iter ct_sampler_len ct_sampler_new ct_sampler_next
        ct_sequential_sampler_new""",
    # data/npy.c, npz.c, csv.c: more readers (file bytes into tensors, no op kernel)
    "readers": """ct_npy_load_mmap ct_npz_load ct_npz_load_buffer ct_csv_defaults ct_csv_load
        ct_csv_load_buffer ct_csv_free""",
    # data/transforms.c: apply calls the transform's callback through its pointer (the built-in
    # ones run ops, which dispatch); freeing and option defaults touch no tensor
    "transforms": "ct_transform_apply ct_transform_free ct_random_erasing_defaults",
    # benchmark timers, measurements, comparisons
    "timers": """ct_timer_new ct_timer_free ct_timer_timeit ct_timer_blocked_autorange
        ct_timer_adaptive_autorange ct_measurement_new ct_measurement_free ct_measurement_str
        ct_measurement_print ct_measurement_mean ct_measurement_median ct_measurement_iqr
        ct_measurement_times ct_measurement_raw_times ct_measurement_number_per_run
        ct_measurement_number_of_runs ct_measurement_num_threads ct_measurement_has_warnings
        ct_measurement_meets_confidence ct_measurement_significant_figures ct_compare_new
        ct_compare_free ct_compare_str ct_compare_print ct_compare_extend_results
        ct_compare_colorize ct_compare_highlight_warnings
        ct_compare_trim_significant_figures""",
    # the profiler's own API
    "profiler": """ct_profiler_defaults ct_profiler_begin ct_profiler_end ct_profiler_reset
        ct_record_function_begin ct_record_function_end ct_profiler_key_averages
        ct_profiler_table ct_profiler_chrome_trace ct_profiler_print_table
        ct_profiler_export_chrome_trace""",
    # printing (reads CPU memory, as an accessor)
    "printing": "ct_print ct_to_string",
}


def public_functions():
    """Names declared with CTORCH_API in src/**/*.h, with the header each is declared in."""
    names = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "src", "**", "*.h"), recursive=True)):
        text = strip_comments(open(path, encoding="utf-8").read())
        for m in re.finditer(r"\bCTORCH_API\b([^;{]*?)\b(\w+)\s*\(", text):
            names.setdefault(m.group(2), os.path.relpath(path, ROOT))
    return names


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def strip_literals(text):
    return re.sub(r'"(\\.|[^"\\\n])*"|\'(\\.|[^\'\\\n])*\'', '""', text)


def preprocess(cc, header):
    src = '#define CTORCH_IMPLEMENTATION\n#include "%s"\n' % os.path.abspath(header)
    out = subprocess.run([cc, "-E", "-P", "-x", "c", "-"], input=src, capture_output=True,
                         text=True, check=True)
    return strip_literals(out.stdout)


IDENT = re.compile(r"[A-Za-z_]\w*")


def definition_name(head):
    """The name a top-level `head {` defines when it is a function definition, else None."""
    head = head.strip()
    if not head.endswith(")") or "=" in head.split("(")[0]:
        return None
    depth, name = 0, None
    for m in re.finditer(r"[A-Za-z_]\w*|[()]", head):
        tok = m.group(0)
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif depth == 0:
            after = head[m.end():].lstrip()
            if after.startswith("(") and tok not in ("__attribute__", "__declspec"):
                name = tok
    return name


def call_graph(text):
    """{function: set of identifiers its body names} for every top-level definition."""
    graph, depth, start, head_start, name = {}, 0, 0, 0, None
    for i, ch in enumerate(text):
        if ch == "{":
            if depth == 0:
                name = definition_name(text[head_start:i])
                start = i
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if name:
                    graph.setdefault(name, set()).update(IDENT.findall(text[start:i]))
                name, head_start = None, i + 1
        elif ch == ";" and depth == 0:
            head_start = i + 1
    return graph


def reaching(graph, entry):
    """The functions from which entry is reachable (entry included)."""
    reach, changed = {entry}, True
    while changed:
        changed = False
        for f, names in graph.items():
            if f not in reach and names & reach:
                reach.add(f)
                changed = True
    return reach


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--header", default=os.path.join(ROOT, "ctorch.h"))
    ap.add_argument("--list", action="store_true", help="also list the allowlisted bypasses")
    args = ap.parse_args()
    graph = call_graph(preprocess(args.cc, args.header))
    if ENTRY not in graph:
        sys.exit("check_dispatch: %s is not defined in %s" % (ENTRY, args.header))
    reach = reaching(graph, ENTRY)
    allowed = {n: why for why, names in ALLOWLIST.items() for n in names.split()}
    public = public_functions()
    bad, allowed_bypass = [], []
    for fn, header in sorted(public.items(), key=lambda kv: (kv[1], kv[0])):
        if fn in reach:
            continue
        if fn not in graph:  # declared but not defined under the default configuration
            continue
        (allowed_bypass if fn in allowed else bad).append((fn, header))
    if args.list:
        for fn, header in allowed_bypass:
            print("allowed  %-36s %-24s (%s)" % (fn, header, allowed[fn]))
        for fn in sorted(n for n in allowed if n not in public):
            print("note: allowlisted %s is not a public function" % fn)
    for fn, header in bad:
        print("bypass   %-36s %s" % (fn, header))
    print("check_dispatch: %d public functions, %d reach %s, %d allowlisted, %d bypass it"
          % (len(public), sum(1 for f in public if f in reach), ENTRY, len(allowed_bypass),
             len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
