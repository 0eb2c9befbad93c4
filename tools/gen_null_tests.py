#!/usr/bin/env python3
"""Generates tests/test_null.c: every public function called with NULL in each pointer argument.

usage: tools/gen_null_tests.py [--check]
Parses the CTORCH_API declarations of ctorch.h. For each function and each pointer argument
it emits a call with NULL there and valid values elsewhere (the fixture in the generated
file: a small float32 tensor, buffers, a module, an optimizer, a dataset...), then checks the
documented outcome: CT_ERR_NULL_ARG (and a NULL result for pointer returns) by default;
"accepted" where the declaration documents NULL as a default (a generator, an opts struct,
user data); "size" where a function filling a caller buffer returns the size it needs;
"noop" for the _free functions. The runner's leak check catches leaks on these paths.
--check: exit 1 when tests/test_null.c differs from what this script writes (make test).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "ctorch.h")
OUT = os.path.join(ROOT, "tests", "test_null.c")

# A valid value per (const-stripped) pointer type, as a C expression over the fixture fx.
VALID = {
    "ct_tensor *": "fx.t",
    "ct_tensor **": "fx.out",
    "ct_tensor *const *": "fx.tl",
    "const ct_tensor *const *": "fx.ctl",
    "int64_t *": "fx.sizes",
    "double *": "fx.times",
    "char *": "fx.text",
    "char **": "fx.names",
    "void *": "fx.bytes",
    "FILE *": "fx.file",
    "ct_module *": "fx.module",
    "ct_module **": "fx.modules",
    "ct_state_dict *": "fx.sd",
    "ct_checkpoint_dict *": "fx.sd",
    "ct_incompatible_keys *": "&fx.keys",
    "ct_hook_handle *": "&fx.handle",
    "ct_forward_pre_hook": "null_test_pre_hook",
    "ct_forward_hook": "null_test_fwd_hook",
    "ct_full_backward_hook": "null_test_bw_hook",
    "void(*)(ct_module*,void*)": "null_test_visit",
    "ct_optimizer *": "fx.opt",
    "ct_grad_scaler *": "fx.scaler",
    "ct_grad_scaler_opts *": "NULL",
    "ct_lr_scheduler *": "fx.sched",
    "ct_lr_scheduler *const *": "fx.scheds",
    "ct_kv_cache *": "fx.kv",
    "ct_lr_lambda_fn": "null_test_lr_lambda",
    "ct_one_cycle_lr_opts *": "&fx.one_cycle_opts",
    "ct_cyclic_lr_opts *": "&fx.cyclic_opts",
    "ct_reduce_lr_on_plateau_opts *": "&fx.plateau_opts",
    "ct_generator *": "fx.gen",
    "ct_dataset *": "fx.ds",
    "ct_dataset **": "fx.ds_out",
    "ct_dataloader *": "fx.dl",
    "ct_sampler *": "fx.sampler",
    "ct_iterable_dataset *": "&fx.ids",
    "ct_iterable_dataset *const *": "fx.ids_list",
    "ct_dataset *const *": "fx.ds_list",
    "ct_transform *": "fx.tf",
    "ct_transform *const *": "fx.tf_list",
    "ct_random_crop_opts *": "&fx.crop_opts",
    "ct_random_erasing_opts *": "&fx.erase_opts",
    "ct_distributed_sampler_opts *": "NULL",
    "ct_timer *": "fx.timer",
    "ct_measurement *": "fx.meas",
    "ct_measurement *const *": "fx.meas_list",
    "ct_compare *": "fx.cmp",
    "ct_sgd_opts *": "&fx.sgd_opts",
    "ct_adam_opts *": "&fx.adam_opts",
    "ct_nll_loss_opts *": "&fx.nll_opts",
    "ct_conv_opts *": "NULL",
    "ct_fold_opts *": "NULL",
    "ct_dataloader_opts *": "&fx.dl_opts",
    "ct_gradcheck_opts *": "&fx.gc_opts",
    "ct_timer_opts *": "&fx.timer_opts",
    "ct_max_pool2d_opts *": "NULL",
    "ct_avg_pool2d_opts *": "NULL",
    "ct_max_pool3d_opts *": "NULL",
    "ct_avg_pool3d_opts *": "NULL",
    "ct_interpolate_opts *": "NULL",
    "ct_batch_norm_opts *": "NULL",
    "ct_instance_norm_opts *": "NULL",
    "ct_batch_norm_module_opts *": "NULL",
    "ct_averaged_model_opts *": "NULL",
    "ct_embedding_opts *": "NULL",
    "ct_embedding_bag_opts *": "NULL",
    "ct_scaled_dot_product_attention_opts *": "NULL",
    "ct_multihead_attention_opts *": "NULL",
    "ct_multihead_attention_forward_opts *": "NULL",
    "ct_transformer_layer_opts *": "NULL",
    "ct_transformer_forward_opts *": "NULL",
    "ct_tensor_hook": "null_test_hook",
    "ct_post_accumulate_grad_hook": "null_test_post_hook",
    "ct_autograd_callback_fn": "null_test_callback",
    "ct_gradcheck_fn": "null_test_gradcheck_fn",
    "ct_module_forward_fn": "null_test_forward",
    "ct_error_handler": "null_test_silent",
    "ct_kernel_fn": "null_test_kernel",
    "ct_op *": "ct_op_registry(NULL)[0]",
    "ct_storage *": "ct_untyped_storage(fx.t)",
    "void*(*)(void*)": "null_test_task",
    "double(*)(double,void*)": "null_test_apply",
    "double(*)(double,double,void*)": "null_test_map",
    "void(*)(void*,void*)": "NULL",
    "void(*)(void*)": "NULL",
    "ct_status(*)(ct_sampler*)": "NULL",
    "int64_t(*)(ct_sampler*,int64_t*)": "null_test_sampler_end",
    "int64_t(*)(constct_sampler*)": "NULL",
}

# Values for arguments whose type alone does not say enough.
VALID_BY_NAME = {
    "name": '"w"',
    "path": '"/nonexistent-ctorch-dir/x"',
    "child": "ct_relu_new()",
}

# Hand-written values for particular functions: (function, argument) -> C expression.
VALID_BY_CALL = {
    ("ct_arena_plan", "arena"): "null_test_arena()",
    ("ct_arena_plan", "step"): "null_test_step",
    ("ct_arena_used", "arena"): "null_test_arena()",
    ("ct_arena_peak", "arena"): "null_test_arena()",
    ("ct_arena_malloc", "ctx"): "null_test_arena()",
    ("ct_arena_free", "ctx"): "null_test_arena()",
    ("ct_arena_realloc", "ctx"): "null_test_arena()",
    ("ct_arena_realloc", "p"): "NULL",
    ("ct_grad_scaler_step", "stepped"): "NULL",
    ("ct_nll_loss", "target"): "fx.labels",
    ("ct_cross_entropy", "target"): "fx.labels",
    ("ct_gather", "index"): "fx.labels",
    ("ct_index_select", "index"): "fx.labels1d",
    ("ct_embedding", "input"): "fx.labels",
    ("ct_embedding_bag", "input"): "fx.labels",
    ("ct_embedding_bag_forward", "input"): "fx.labels",
    ("ct_addmm", "mat2"): "fx.t32",
    ("ct_dataset_get_batch", "indices"): "fx.zeros",
    ("ct_subset_new", "indices"): "fx.zeros",
    ("ct_random_split", "lengths"): "fx.sizes",
    ("ct_optimizer_add_param_group", "params"): "fx.extra_params",
    ("ct_optimizer_add_param_group", "opts"): "&fx.sgd_opts",
    ("ct_module_register_parameter", "param"): "fx.extra",
    ("ct_module_register_buffer", "buffer"): "fx.extra",
    ("ct_module_register_buffer_persistent", "buffer"): "fx.extra",
    ("ct_averaged_model_new", "copy"): "ct_relu_new()",
    ("ct_sgd_new", "params"): "fx.params",
    ("ct_adam_new", "params"): "fx.params",
    ("ct_adamw_new", "params"): "fx.params",
    ("ct_rmsprop_new", "params"): "fx.params",
    ("ct_rmsprop_new", "opts"): "NULL",
    ("ct_adagrad_new", "params"): "fx.params",
    ("ct_adagrad_new", "opts"): "NULL",
    ("ct_adadelta_new", "params"): "fx.params",
    ("ct_adadelta_new", "opts"): "NULL",
    ("ct_adamax_new", "params"): "fx.params",
    ("ct_adamax_new", "opts"): "NULL",
    ("ct_nadam_new", "params"): "fx.params",
    ("ct_nadam_new", "opts"): "NULL",
    ("ct_csv_load_buffer", "opts"): "NULL",
    ("ct_csv_load", "opts"): "NULL",
    ("ct_radam_new", "params"): "fx.params",
    ("ct_radam_new", "opts"): "NULL",
    ("ct_gradcheck", "inputs"): "fx.grad_inputs",
    ("ct_tensor_from_data", "data"): "fx.bytes",
    ("ct_from_blob", "data"): "fx.bytes",
    # zero-dim shapes (ndims from fx.zeros), so shapes' entries are never read
    ("ct_broadcast_shapes", "shapes"): "(const int64_t *const *)fx.ctl",
    ("ct_broadcast_shapes", "ndims"): "(const int *)fx.zeros",
    ("ct_broadcast_shapes", "out_ndim"): "(int *)fx.zeros",
    ("ct_split", "split_size"): "1",
    ("ct_chunk", "chunks"): "1",
    ("ct_set_printoptions", "profile"): '"default"',
    ("ct_set_printoptions", "opts"): "NULL",
    ("ct_tensor_split", "sections"): "1",
    ("ct_hsplit", "sections"): "1",
    ("ct_vsplit", "sections"): "1",
    ("ct_roll", "n_shifts"): "1",
    ("ct_roll", "n_dims"): "1",
    ("ct_scatter_reduce", "reduce"): '"sum"',
    ("ct_scatter_reduce_", "reduce"): '"sum"',
    ("ct_linalg_matrix_norm", "ord"): '"fro"',
    ("ct_linalg_norm", "ord"): '"fro"',
    ("ct_transformer_encoder_new", "layer"): "ct_transformer_encoder_layer_new(4, 2, NULL)",
    ("ct_transformer_encoder_new", "norm"): "ct_identity_new()",
    ("ct_transformer_decoder_new", "layer"): "ct_transformer_decoder_layer_new(4, 2, NULL)",
    ("ct_transformer_decoder_new", "norm"): "ct_identity_new()",
}

# Scalar arguments: by name, else by type.
SCALAR_BY_NAME = {
    "ndim": "2", "n_fields": "1", "dim": "0", "group": "0", "cap": "2", "name_cap": "32",
    "nbytes": "sizeof fx.bytes", "n": "1", "number": "1", "number_per_run": "1",
    "lr": "0.1", "high": "10", "index": "0", "num_layers": "1", "min_run_time_s": "0.001", "max_run_time_s": "0.002",
}
SCALAR_BY_TYPE = {"size_t": "sizeof fx.text", "bool": "false", "double": "1.0",
                  "float": "1.0f", "ct_dtype": "CT_FLOAT32", "ct_status": "CT_OK",
                  "ct_device": "ct_device_cpu()"}

# Documented outcomes other than CT_ERR_NULL_ARG: (function, argument) -> kind.
# "accepted": NULL means a default (the function may succeed); "size": buf NULL returns the
# size needed; "noop": freeing NULL does nothing.
OUTCOME = {
    ("ct_arena_realloc", "p"): "accepted",
    ("ct_set_error_handler", "fn"): "accepted",
    ("ct_from_blob", "deleter"): "accepted",
    ("ct_sampler_new", "iter"): "accepted",
    ("ct_sampler_new", "len"): "accepted",
    ("ct_module_new", "user_free"): "accepted",
    ("ct_linear", "bias"): "accepted",
    ("ct_conv1d", "bias"): "accepted",
    ("ct_conv2d", "bias"): "accepted",
    ("ct_conv_transpose1d", "bias"): "accepted",
    ("ct_conv_transpose2d", "bias"): "accepted",
    ("ct_conv3d", "bias"): "accepted",
    ("ct_conv_transpose3d", "bias"): "accepted",
    ("ct_cross", "dim"): "accepted",
    ("ct_backward", "grad_output"): "accepted",
    ("ct_set_grad", "grad"): "accepted",
    ("ct_measurement_new", "spec"): "accepted",
    ("ct_wait", "f"): "noop",
    ("ct_dispatch_kernel", "op"): "accepted",
    ("ct_op_registry", "n"): "accepted",
    ("ct_init_calculate_fan_in_and_fan_out", "fan_in"): "accepted",
    ("ct_init_calculate_fan_in_and_fan_out", "fan_out"): "accepted",
    ("ct_module_named_parameters", "names"): "size",
    ("ct_module_named_parameters", "params"): "size",
    ("ct_autograd_grad", "grad_outputs"): "accepted",
    ("ct_autograd_backward", "grad_tensors"): "accepted",
    ("ct_autograd_backward", "inputs"): "accepted",
    ("ct_module_parameters", "params"): "size",
    ("ct_module_buffers", "buffers"): "accepted",  # Linear has no buffers, no children
    ("ct_module_named_buffers", "names"): "accepted",
    ("ct_module_named_buffers", "buffers"): "accepted",
    ("ct_module_children", "children"): "accepted",
    ("ct_module_named_modules", "names"): "size",
    ("ct_module_named_modules", "modules"): "size",
    ("ct_module_load_state_dict", "keys"): "accepted",
    ("ct_module_load", "keys"): "accepted",
    ("ct_multihead_attention_forward", "attn_weights"): "accepted",
    ("ct_transformer_encoder_layer_forward", "src_mask"): "accepted",
    ("ct_transformer_encoder_layer_forward", "src_key_padding_mask"): "accepted",
    ("ct_transformer_encoder_forward", "mask"): "accepted",
    ("ct_transformer_encoder_forward", "src_key_padding_mask"): "accepted",
    ("ct_transformer_encoder_new", "norm"): "accepted",
    ("ct_transformer_decoder_new", "norm"): "accepted",
    ("ct_state_dict_update", "prefix"): "accepted",
    ("ct_save_buffer", "buf"): "size",
    ("ct_optimizer_params", "params"): "size",
    ("ct_lr_scheduler_get_last_lr", "lrs"): "size",
    ("ct_sequential_lr_new", "milestones"): "accepted",  # no milestones for one scheduler
    ("ct_optimizer_add_param_group", "opts"): "accepted",
    ("ct_to_string", "buf"): "size",
    ("ct_parallel_info_string", "buf"): "size",
    ("ct_measurement_str", "buf"): "size",
    ("ct_compare_str", "buf"): "size",
    ("ct_npy_save_buffer", "buf"): "size",
    ("ct_max_dim", "values"): "accepted",
    ("ct_max_dim", "indices"): "accepted",
    ("ct_min_dim", "values"): "accepted",
    ("ct_min_dim", "indices"): "accepted",
    ("ct_sort", "values"): "accepted",
    ("ct_sort", "indices"): "accepted",
    ("ct_topk", "values"): "accepted",
    ("ct_topk", "indices"): "accepted",
    ("ct_kthvalue", "values"): "accepted",
    ("ct_kthvalue", "indices"): "accepted",
    ("ct_median_dim", "values"): "accepted",
    ("ct_median_dim", "indices"): "accepted",
    ("ct_nanmedian_dim", "values"): "accepted",
    ("ct_nanmedian_dim", "indices"): "accepted",
    ("ct_mode", "values"): "accepted",
    ("ct_mode", "indices"): "accepted",
    ("ct_unique", "inverse"): "accepted",
    ("ct_unique", "counts"): "accepted",
    ("ct_unique_consecutive", "inverse"): "accepted",
    ("ct_unique_consecutive", "counts"): "accepted",
    ("ct_quantile", "dim"): "accepted",
    ("ct_nanquantile", "dim"): "accepted",
    ("ct_searchsorted", "sorter"): "accepted",
    ("ct_bincount", "weights"): "accepted",
    ("ct_cummax", "values"): "accepted",
    ("ct_cummax", "indices"): "accepted",
    ("ct_cummin", "values"): "accepted",
    ("ct_cummin", "indices"): "accepted",
    ("ct_var_mean", "var"): "accepted",
    ("ct_var_mean", "mean"): "accepted",
    ("ct_std_mean", "std"): "accepted",
    ("ct_std_mean", "mean"): "accepted",
    ("ct_aminmax", "dim"): "accepted",
    ("ct_aminmax", "min"): "accepted",
    ("ct_aminmax", "max"): "accepted",
    ("ct_generator_initial_seed", "g"): "accepted",
    ("ct_node_name", "n"): "accepted",
    ("ct_set_alloc_context", "ctx"): "noop",
    ("ct_profiler_table", "buf"): "accepted",  # the size needed, or no profile recorded
    ("ct_profiler_table", "sort_by"): "accepted",
    ("ct_profiler_print_table", "sort_by"): "accepted",
    ("ct_profiler_chrome_trace", "buf"): "accepted",
    ("ct_nan_to_num", "posinf"): "accepted",  # NULL: PyTorch's None
    ("ct_nan_to_num", "neginf"): "accepted",
    ("ct_nan_to_num_", "posinf"): "accepted",
    ("ct_nan_to_num_", "neginf"): "accepted",
    ("ct_linalg_slogdet", "logabsdet"): "accepted",
    ("ct_linalg_qr", "R"): "accepted",
    ("ct_linalg_eigh", "eigenvectors"): "accepted",
    ("ct_linalg_svd", "S"): "accepted",
    ("ct_linalg_svd", "Vh"): "accepted",
    ("ct_linalg_matrix_norm", "ord"): "accepted",
    ("ct_linalg_matrix_norm", "dim"): "accepted",
    ("ct_linalg_norm", "ord"): "accepted",
    ("ct_linalg_norm", "dims"): "accepted",
    ("ct_split", "out"): "size",
    ("ct_split_with_sizes", "out"): "size",
    ("ct_chunk", "out"): "size",
    ("ct_set_printoptions", "profile"): "accepted",
    ("ct_set_printoptions", "opts"): "accepted",
    ("ct_meshgrid", "indexing"): "accepted",
    ("ct_unbind", "out"): "size",
    ("ct_tensor_split", "out"): "size",
    ("ct_tensor_split_indices", "out"): "size",
    ("ct_hsplit", "out"): "size",
    ("ct_vsplit", "out"): "size",
    ("ct_dsplit", "out"): "accepted",  # the fixture is 2-D: dsplit's own error
    ("ct_max_pool2d_with_indices", "output"): "accepted",
    ("ct_max_pool2d_with_indices", "indices"): "accepted",
    ("ct_adaptive_max_pool2d", "indices"): "accepted",
    ("ct_max_pool3d_with_indices", "output"): "accepted",
    ("ct_max_pool3d_with_indices", "indices"): "accepted",
    ("ct_adaptive_max_pool3d", "indices"): "accepted",
    ("ct_lp_pool2d", "stride"): "accepted",
    ("ct_lp_pool3d", "stride"): "accepted",
    ("ct_max_unpool2d", "stride"): "accepted",
    ("ct_max_unpool2d", "padding"): "accepted",
    ("ct_max_unpool2d", "output_size"): "accepted",
    ("ct_max_unpool3d", "stride"): "accepted",
    ("ct_max_unpool3d", "padding"): "accepted",
    ("ct_max_unpool3d", "output_size"): "accepted",
    ("ct_binary_cross_entropy", "weight"): "accepted",  # NULL: PyTorch's None
    ("ct_binary_cross_entropy_with_logits", "weight"): "accepted",
    ("ct_binary_cross_entropy_with_logits", "pos_weight"): "accepted",
    ("ct_bce_loss_new", "weight"): "accepted",
    ("ct_bce_with_logits_loss_new", "weight"): "accepted",
    ("ct_bce_with_logits_loss_new", "pos_weight"): "accepted",
    ("ct_multi_margin_loss", "weight"): "accepted",
    # nn/norm.c, nn/activation.c: optional tensors
    ("ct_batch_norm", "running_mean"): "accepted",
    ("ct_batch_norm", "running_var"): "accepted",
    ("ct_instance_norm", "running_mean"): "accepted",
    ("ct_instance_norm", "running_var"): "accepted",
    ("ct_layer_norm", "weight"): "accepted",
    ("ct_layer_norm", "bias"): "accepted",
    ("ct_scaled_dot_product_attention", "attn_mask"): "accepted",
    ("ct_group_norm", "weight"): "accepted",
    ("ct_group_norm", "bias"): "accepted",
    ("ct_rms_norm", "weight"): "accepted",
    # nn/distance.c, optim/swa_utils.c
    ("ct_bilinear", "bias"): "accepted",
    ("ct_swalr_new", "anneal_strategy"): "accepted",  # NULL: "cos"
    ("ct_embedding_bag", "offsets"): "accepted",
    ("ct_embedding_bag", "per_sample_weights"): "accepted",
    ("ct_embedding_bag_forward", "offsets"): "accepted",
    ("ct_embedding_bag_forward", "per_sample_weights"): "accepted",
    # amp/: the op name of ct_autocast_policy (CT_AUTOCAST_NONE), the lists' count pointer,
    # GradScaler.step's `stepped`, is_enabled (false)
    ("ct_autocast_policy", "op"): "accepted",
    ("ct_autocast_cpu_lower_ops", "n"): "accepted",
    ("ct_autocast_cpu_fp32_ops", "n"): "accepted",
    ("ct_autocast_cpu_promote_ops", "n"): "accepted",
    ("ct_autocast_cuda_lower_ops", "n"): "accepted",
    ("ct_autocast_cuda_fp32_ops", "n"): "accepted",
    ("ct_autocast_cuda_promote_ops", "n"): "accepted",
    ("ct_grad_scaler_step", "stepped"): "accepted",
    ("ct_grad_scaler_is_enabled", "scaler"): "accepted",
}
ACCEPTED_TYPES = ("ct_generator *", "ct_csv_opts *", "ct_sgd_opts *", "ct_adam_opts *", "ct_nll_loss_opts *",
                  "ct_dataloader_opts *", "ct_gradcheck_opts *", "ct_profiler_opts *",
                  "ct_max_pool2d_opts *", "ct_avg_pool2d_opts *", "ct_interpolate_opts *",
                  "ct_max_pool3d_opts *", "ct_avg_pool3d_opts *",
                  "ct_rmsprop_opts *", "ct_adagrad_opts *", "ct_adadelta_opts *",
                  "ct_adamax_opts *", "ct_nadam_opts *", "ct_radam_opts *",
                  "ct_cyclic_lr_opts *", "ct_reduce_lr_on_plateau_opts *",
                  "ct_one_cycle_lr_opts *", "ct_conv_opts *", "ct_fold_opts *",
                  "ct_batch_norm_opts *", "ct_instance_norm_opts *", "ct_batch_norm_module_opts *",
                  "ct_averaged_model_opts *", "ct_embedding_opts *", "ct_embedding_bag_opts *",
                  "ct_scaled_dot_product_attention_opts *", "ct_multihead_attention_opts *",
                  "ct_multihead_attention_forward_opts *", "ct_transformer_layer_opts *",
                  "ct_transformer_forward_opts *", "ct_distributed_sampler_opts *",
                  "ct_grad_scaler_opts *")
ACCEPTED_NAMES = ("user", "user_data", "ctx", "arg", "clock_user")

# Arguments the function takes ownership of whatever happens (not freed by the test).
CONSUMED = {("ct_sequential_append", "child"), ("ct_module_list_append", "child"),
            ("ct_module_dict_set", "child"), ("ct_averaged_model_new", "copy"),
            ("ct_transformer_encoder_new", "layer"), ("ct_transformer_encoder_new", "norm"),
            ("ct_transformer_decoder_new", "layer"), ("ct_transformer_decoder_new", "norm")}

# Statements restoring global state after a call: the runner's silent handler; the inter-op
# pool a fork started (its threads' memory would read as a leak).
AFTER_CALL = {
    "ct_set_error_handler": "ct_test_install_silent_handler();",
    "ct_fork": "(void)ct_parallel_shutdown();",
    "ct_profiler_begin": "(void)ct_profiler_end(); (void)ct_profiler_reset();",
}

# What frees a returned object (so an accepted NULL does not leak).
FREE_BY_RETURN = {
    "ct_module *": "ct_module_free", "ct_optimizer *": "ct_optimizer_free",
    "ct_grad_scaler *": "ct_grad_scaler_free",
    "ct_generator *": "ct_generator_free", "ct_dataset *": "ct_dataset_free",
    "ct_dataloader *": "ct_dataloader_free", "ct_timer *": "ct_timer_free",
    "ct_sampler *": "ct_sampler_free", "ct_iterable_dataset *": "ct_iterable_dataset_free",
    "ct_measurement *": "ct_measurement_free", "ct_compare *": "ct_compare_free",
    "ct_future *": "ct_wait", "ct_state_dict *": "ct_state_dict_free",
    "ct_checkpoint_dict *": "ct_state_dict_free",
    "ct_lr_scheduler *": "ct_lr_scheduler_free",
    "ct_kv_cache *": "ct_kv_cache_free",
    "ct_future *": "ct_wait",
    "ct_transform *": "ct_transform_free",
}
# Functions returning one of their arguments or a borrowed object: nothing to free.
RETURNS_BORROWED = {"ct_module_apply", "ct_module_requires_grad_", "ct_module_to",
                    "ct_module_list_append", "ct_sequential_append", "ct_module_get_submodule",
                    "ct_module_dict_get", "ct_module_child"}
POINTER_RESULTS = ("ct_tensor *",) + tuple(FREE_BY_RETURN)


def split_params(params):
    out, depth, cur = [], 0, ""
    for ch in params:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return [] if out == ["void"] else out


def parse_param(p):
    """(normalized type, name, is_pointer) of one parameter declaration."""
    fn = re.match(r"(.*)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", p)
    if fn:  # a function pointer: keep only the parameter types
        args = ", ".join(re.sub(r"\s*\b\w+$", "", a).strip() if a.strip() != "void" else a
                         for a in split_params(fn.group(3)))
        return ("%s(*)(%s)" % (fn.group(1), args)).replace(" ", ""), fn.group(2), True
    m = re.match(r"(.*?)(\w+)$", p)
    ctype = m.group(1).strip()
    if ctype.count("*") == 1 or not ctype.startswith("const ct_tensor"):
        ctype = re.sub(r"^const\s+", "", ctype)
    ctype = re.sub(r"\s*\*\s*", " *", ctype).replace("* const", "*const").strip()
    ctype = re.sub(r"\*\s+\*", "**", ctype)
    pointer = "*" in ctype or ctype.endswith(("_fn", "_hook", "_handler"))
    return ctype, m.group(2), pointer


def declarations(text):
    body = text[:text.index("#ifdef CTORCH_IMPLEMENTATION")] if "#ifdef CTORCH_IMPLEMENTATION" \
        in text else text
    decls = []
    for chunk in re.split(r"\n(?=CTORCH_API)", body):
        m = re.match(r"CTORCH_API\s+([^;]*?);", chunk, re.S)
        if not m:
            continue
        d = " ".join(m.group(1).split())
        m = re.match(r"(.*?)\b(ct_\w+)\s*\((.*)\)$", d)
        ret = re.sub(r"^const\s+", "", m.group(1).strip())
        ret = re.sub(r"\s*\*\s*", " *", ret).strip()
        params = [parse_param(p) for p in split_params(m.group(3))]
        decls.append((m.group(2), ret, params))
    return decls


def outcome(fn, ctype, name):
    if (fn, name) in OUTCOME:
        return OUTCOME[(fn, name)]
    if fn.endswith("_free") or fn in ("ct_free", "ct_release", "ct_retain"):
        return "noop"
    if ctype in ACCEPTED_TYPES or (ctype == "void *" and name in ACCEPTED_NAMES):
        return "accepted"
    return "null_arg"


def value(fn, ctype, name):
    if (fn, name) in VALID_BY_CALL:
        return VALID_BY_CALL[(fn, name)]
    if name in VALID_BY_NAME and (ctype.endswith("*") or name == "child"):
        return VALID_BY_NAME[name]
    if ctype.startswith("ct_") and ctype.endswith(("_fn", "_hook", "_handler")) or "(*)" in ctype:
        return VALID[ctype]
    if ctype.endswith("*"):
        key = ctype
        if key not in VALID:
            raise SystemExit("gen_null_tests: no valid value for %s %s of %s: add one to "
                             "VALID_BY_CALL" % (ctype, name, fn))
        return VALID[key]
    if name in SCALAR_BY_NAME:
        return SCALAR_BY_NAME[name]
    return SCALAR_BY_TYPE.get(ctype, "0")


def wrap(head, args, tail, indent):
    """head + ", ".join(args) + tail, continued on lines indented 4 more when too wide."""
    line = indent + head + ", ".join(args) + tail
    if len(line) <= 100:
        return [line]
    lines, cur = [], indent + head
    for i, a in enumerate(args):
        piece = a + (", " if i + 1 < len(args) else tail)
        if len(cur) + len(piece.rstrip()) > 100:
            lines.append(cur.rstrip())
            cur = indent + "    "
        cur += piece
    return lines + [cur]


def c_string(text, indent):
    """A C string literal of text, split into adjacent literals within 100 columns."""
    text = text.replace('"', '\\"')
    out, cur = [], ""
    for part in re.split(r"(?<=, )", text):
        if cur and len(indent) + len(cur) + len(part) + 2 > 100:
            out.append(indent + '"%s"' % cur)
            cur = ""
        cur += part
    return out + [indent + '"%s";' % cur]


def call_case(fn, ret, params, k, bad="NULL"):
    """C lines calling fn with bad (NULL, or a freed tensor) in argument k."""
    args = [bad if i == k else value(fn, t, n) for i, (t, n, _) in enumerate(params)]
    ctype, name, _ = params[k]
    kind = outcome(fn, ctype, name) if bad == "NULL" else bad.split(".")[1]
    ind = "        "
    lines = []
    if "ct_relu_new()" in args:  # a fresh child module per call
        args = ["child" if a == "ct_relu_new()" else a for a in args]
        lines.append(ind + "ct_module *child = ct_relu_new();")
    literal = c_string("%s(%s)" % (fn, ", ".join(args)), "")
    if len(literal) == 1 and len(ind + "const char *call = " + literal[0]) <= 100:
        lines.append(ind + "const char *call = " + literal[0])
    else:
        lines.append(ind + "const char *call =")
        lines += c_string("%s(%s)" % (fn, ", ".join(args)), ind + "    ")
    check_null = kind in ("null_arg", "freed") and ret in POINTER_RESULTS
    owned = ret in FREE_BY_RETURN and fn not in RETURNS_BORROWED
    if check_null or owned or kind == "size":
        lines += wrap("%s%sr = %s(" % (ret, "" if ret.endswith("*") else " ", fn), args, ");", ind)
    else:
        lines += wrap("%s%s(" % ("" if ret == "void" else "(void)", fn), args, ");", ind)
    if check_null:
        lines.append(ind + 'CHECK_MSG(r == NULL, "%s returned non-NULL", call);')
    if kind == "size":
        lines.append(ind + "expect_size(call, (int64_t)r);")
    else:
        lines.append(ind + "expect_%s(call);" % kind)
    if owned:
        lines.append(ind + "%s(r);" % FREE_BY_RETURN[ret])
    if "child" in args and not any(f == fn for f, _ in CONSUMED):
        lines.append(ind + "if (!registered(fx.module, child)) { /* not taken: still ours */")
        lines.append(ind + "    ct_module_free(child);")
        lines.append(ind + "}")
    if fn in AFTER_CALL:
        lines.append(ind + AFTER_CALL[fn])
    return ["    {"] + lines + ["    }"]


PRELUDE = r'''
/* tests/test_null.c - GENERATED by tools/gen_null_tests.py from ctorch.h; do not edit.
 * Regenerate with `python3 tools/gen_null_tests.py` after changing a public declaration;
 * `make test` fails when this file is stale.
 *
 * Every public function is called with NULL in each pointer argument in turn, the other
 * arguments valid (the fixture below). Each call must not crash and must give its
 * documented outcome: CT_ERR_NULL_ARG (and a NULL result) by default; accepted where NULL
 * means a default; the size needed where it fills a caller's buffer; nothing for _free.
 * The runner checks that nothing leaked. Under CTORCH_DEBUG each function is also given a
 * freed tensor in each tensor argument and must reject it (CT_ERR_STATE), not crash.
 */
#include "test.h"

#include <stdlib.h>

typedef struct null_fixture {
    ct_tensor *t, *t32, *extra, *labels, *labels1d, *freed, *foreign;
    double foreign_store[64];
    ct_tensor *tl[4], *out[8], *params[2], *extra_params[1], *grad_inputs[1];
    const ct_tensor *ctl[4];
    int64_t sizes[8], zeros[8];
    double times[8];
    char text[4096], name_store[8][32], *names[8];
    unsigned char bytes[4096];
    FILE *file;
    ct_module *module, *modules[8];
    ct_state_dict *sd;
    ct_incompatible_keys keys;
    ct_hook_handle handle;
    ct_optimizer *opt;
    ct_grad_scaler *scaler;
    ct_lr_scheduler *sched, *scheds[1];
    ct_kv_cache *kv;
    ct_one_cycle_lr_opts one_cycle_opts;
    ct_cyclic_lr_opts cyclic_opts;
    ct_reduce_lr_on_plateau_opts plateau_opts;
    ct_generator *gen;
    ct_dataset *ds, *ds_out[8];
    ct_dataloader *dl;
    ct_sampler *sampler;
    ct_iterable_dataset ids, *ids_list[1];
    ct_dataset *ds_list[1];
    ct_transform *tf, *tf_list[1];
    ct_random_crop_opts crop_opts;
    ct_random_erasing_opts erase_opts;
    ct_timer *timer;
    ct_measurement *meas, *meas_list[1];
    ct_compare *cmp;
    ct_sgd_opts sgd_opts;
    ct_adam_opts adam_opts;
    ct_nll_loss_opts nll_opts;
    ct_dataloader_opts dl_opts;
    ct_gradcheck_opts gc_opts;
    ct_timer_opts timer_opts;
} null_fixture;

static void null_test_stmt(void *user) { (void)user; }

static int64_t null_test_sampler_end(ct_sampler *s, int64_t *out)
{
    (void)s;
    (void)out;
    return 0;
}

static int null_test_stream_end(ct_iterable_dataset *ds, ct_tensor **fields)
{
    (void)ds;
    (void)fields;
    return 0;
}

static void null_test_silent(ct_status code, const char *message, void *user)
{
    (void)code;
    (void)message;
    (void)user;
}

static void *null_test_task(void *arg) { return arg; }
static void null_test_step(void *user) { (void)user; }
static ct_arena *null_test_arena(void)
{
    static unsigned char buf[1024];
    return ct_arena_new(buf, sizeof buf);
}
static double null_test_apply(double x, void *user) { (void)user; return x; }
static double null_test_lr_lambda(int64_t epoch, int64_t group, void *user)
{
    (void)epoch;
    (void)group;
    (void)user;
    return 1.0;
}
static double null_test_map(double x, double y, void *user) { (void)user; return x + y; }

static ct_status null_test_kernel(ct_op_call *call)
{
    (void)call;
    return CT_OK;
}

static ct_tensor *null_test_hook(const ct_tensor *grad, void *user)
{
    (void)grad;
    (void)user;
    return NULL;
}

static void null_test_post_hook(ct_tensor *t, void *user)
{
    (void)t;
    (void)user;
}

static void null_test_callback(void *user) { (void)user; }

static ct_tensor *null_test_gradcheck_fn(ct_tensor *const *inputs, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_mul(inputs[0], inputs[0]);
}

static ct_tensor *null_test_forward(ct_module *m, const ct_tensor *input)
{
    (void)m;
    return ct_clone(input);
}

static ct_tensor *null_test_pre_hook(ct_module *m, const ct_tensor *input, void *user)
{
    (void)m;
    (void)input;
    (void)user;
    return NULL;
}

static ct_tensor *null_test_fwd_hook(ct_module *m, const ct_tensor *input,
                                     const ct_tensor *output, void *user)
{
    (void)m;
    (void)input;
    (void)output;
    (void)user;
    return NULL;
}

static ct_tensor *null_test_bw_hook(ct_module *m, const ct_tensor *grad_input,
                                    const ct_tensor *grad_output, void *user)
{
    (void)m;
    (void)grad_input;
    (void)grad_output;
    (void)user;
    return NULL;
}

static void null_test_visit(ct_module *m, void *user)
{
    (void)m;
    (void)user;
}

/* Opens a scope (closed by fixture_close) and makes one valid value of every kind. */
static void fixture_open(null_fixture *fx)
{
    memset(fx, 0, sizeof *fx);
#ifdef CTORCH_DEBUG
    int64_t s1[1] = {1};
    fx->freed = ct_ones(s1, 1, CT_FLOAT32); /* a stale handle */
    ct_free(fx->freed);
    fx->foreign = (ct_tensor *)(void *)fx->foreign_store; /* not a tensor at all */
#endif
    ct_scope_begin();
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s2[1] = {2}, s21[2] = {2, 1};
    fx->t = ct_ones(s23, 2, CT_FLOAT32);
    fx->t32 = ct_ones(s32, 2, CT_FLOAT32);
    fx->extra = ct_ones(s2, 1, CT_FLOAT32);
    fx->labels = ct_zeros(s21, 2, CT_INT64);
    fx->labels1d = ct_zeros(s2, 1, CT_INT64);
    for (int i = 0; i < 4; i++) {
        fx->tl[i] = fx->t;
        fx->ctl[i] = fx->t;
    }
    for (int i = 0; i < 8; i++) {
        fx->sizes[i] = i < 2 ? 2 + i : 1;
        fx->times[i] = 1e-3 * (i + 1);
        fx->names[i] = fx->name_store[i];
    }
    fx->sizes[0] = 2;
    fx->sizes[1] = 3;
    fx->file = tmpfile();
    fx->module = ct_linear_new(3, 2, true);
    ct_module_parameters(fx->module, fx->params, 2);
    fx->sd = ct_module_state_dict(fx->module);
    ct_tensor *p = ct_requires_grad_(ct_ones(s2, 1, CT_FLOAT64), true);
    fx->extra_params[0] = p;
    fx->grad_inputs[0] = ct_requires_grad_(ct_ones(s2, 1, CT_FLOAT64), true);
    fx->sgd_opts = ct_sgd_defaults();
    fx->adam_opts = ct_adam_defaults();
    fx->nll_opts = ct_nll_loss_defaults();
    fx->dl_opts = ct_dataloader_defaults();
    fx->gc_opts = ct_gradcheck_defaults();
    fx->opt = ct_sgd_new(fx->params, 2, NULL);
    fx->scaler = ct_grad_scaler_new(NULL);
    fx->sched = ct_step_lr_new(fx->opt, 1, 0.5);
    fx->scheds[0] = fx->sched;
    fx->kv = ct_kv_cache_new(1, 4, 1, 2, CT_FLOAT32);
    fx->one_cycle_opts = ct_one_cycle_lr_defaults();
    fx->one_cycle_opts.total_steps = 10;
    fx->cyclic_opts = ct_cyclic_lr_defaults();
    fx->plateau_opts = ct_reduce_lr_on_plateau_defaults();
    fx->gen = ct_generator_new();
    fx->ds = ct_tensor_dataset_new(fx->tl, 1);
    fx->dl = ct_dataloader_new(fx->ds, NULL);
    fx->sampler = ct_sequential_sampler_new(fx->ds);
    fx->ids.next = null_test_stream_end;
    fx->ids.n_fields = 1;
    fx->ids_list[0] = &fx->ids;
    fx->ds_list[0] = fx->ds;
    fx->tf = ct_random_horizontal_flip_new(0.5);
    fx->tf_list[0] = fx->tf;
    fx->crop_opts.size[0] = fx->crop_opts.size[1] = 1;
    fx->erase_opts = ct_random_erasing_defaults();
    fx->timer_opts.stmt = null_test_stmt;
    fx->timer = ct_timer_new(&fx->timer_opts);
    fx->meas = ct_measurement_new(1, fx->times, 3, &fx->timer_opts);
    fx->meas_list[0] = fx->meas;
    fx->cmp = ct_compare_new(fx->meas_list, 1);
    CHECK_MSG(ct_error() == NULL && fx->file, "fixture: %s", ct_error() ? ct_error() : "");
}

static void fixture_close(null_fixture *fx)
{
    for (int i = 0; i < 8; i++) {
        ct_dataset_free(fx->ds_out[i]);
    }
    ct_compare_free(fx->cmp);
    ct_measurement_free(fx->meas);
    ct_timer_free(fx->timer);
    ct_dataloader_free(fx->dl);
    ct_sampler_free(fx->sampler);
    ct_dataset_free(fx->ds);
    ct_transform_free(fx->tf);
    ct_generator_free(fx->gen);
    ct_lr_scheduler_free(fx->sched);
    ct_kv_cache_free(fx->kv);
    ct_grad_scaler_free(fx->scaler);
    ct_optimizer_free(fx->opt);
    ct_module_free(fx->module);
    ct_state_dict_free(fx->sd);
    ct_incompatible_keys_free(&fx->keys);
    if (fx->file) {
        fclose(fx->file);
    }
    ct_scope_end();
}

/* Whether child was registered in m (then m owns it). */
static bool registered(const ct_module *m, const ct_module *child)
{
    for (int64_t i = 0; i < ct_module_num_children(m); i++) {
        if (ct_module_child(m, i) == child) {
            return true;
        }
    }
    return false;
}

static void expect_null_arg(const char *call)
{
    CHECK_MSG(ct_error_code() == CT_ERR_NULL_ARG, "%s: error %s (%s), want null_arg", call,
              ct_status_str(ct_error_code()), ct_error() ? ct_error() : "none");
    ct_error_clear();
}

static void expect_accepted(const char *call)
{
    CHECK_MSG(ct_error_code() != CT_ERR_NULL_ARG, "%s: NULL is documented as accepted: %s",
              call, ct_error() ? ct_error() : "");
    ct_error_clear();
}

static void expect_noop(const char *call)
{
    CHECK_MSG(ct_error() == NULL, "%s: freeing NULL must be a no-op: %s", call,
              ct_error() ? ct_error() : "");
    ct_error_clear();
}

#ifdef CTORCH_DEBUG
/* Under CTORCH_DEBUG, a freed tensor handle is rejected with CT_ERR_STATE. */
static void expect_freed(const char *call)
{
    CHECK_MSG(ct_error_code() == CT_ERR_STATE &&
                  (strstr(ct_error(), "was freed") || strstr(ct_error(), "double free")),
              "%s: error %s (%s), want the freed-tensor error", call,
              ct_status_str(ct_error_code()), ct_error() ? ct_error() : "none");
    ct_error_clear();
}

/* Under CTORCH_DEBUG, a pointer that is not a tensor ctorch made is rejected likewise. */
static void expect_foreign(const char *call)
{
    CHECK_MSG(ct_error_code() == CT_ERR_STATE && strstr(ct_error(), "not a live tensor"),
              "%s: error %s (%s), want the foreign-pointer error", call,
              ct_status_str(ct_error_code()), ct_error() ? ct_error() : "none");
    ct_error_clear();
}
#endif

/* A buffer-filling call given buf NULL returns the size it needs (bytes, or the count of
   items it would write), with no error. */
static void expect_size(const char *call, int64_t size)
{
    CHECK_MSG(ct_error() == NULL && size != 0, "%s: want the size needed, got %lld (%s)", call,
              (long long)size, ct_error() ? ct_error() : "no error");
    ct_error_clear();
}
'''


def generate():
    with open(HEADER) as f:
        decls = declarations(f.read())
    out = [PRELUDE.lstrip("\n")]
    names = []
    for fn, ret, params in decls:
        cases = [k for k, p in enumerate(params) if p[2]]
        if not cases:
            continue
        body = ["", "static void test_null_%s(void)" % fn, "{", "    null_fixture fx;",
                "    fixture_open(&fx);"]
        for k in cases:
            body += call_case(fn, ret, params, k)
        body += ["    fixture_close(&fx);", "}"]
        out.append("\n".join(body) + "\n")
        names.append(fn)
    out.append("\n#ifdef CTORCH_DEBUG\n")
    freed = []
    for fn, ret, params in decls:
        cases = [k for k, p in enumerate(params) if p[0] in ("ct_tensor *", "const ct_tensor *")]
        if not cases:
            continue
        body = ["", "static void test_freed_%s(void)" % fn, "{", "    null_fixture fx;",
                "    fixture_open(&fx);"]
        for k in cases:
            body += call_case(fn, ret, params, k, "fx.freed")
            body += call_case(fn, ret, params, k, "fx.foreign")
        body += ["    fixture_close(&fx);", "}"]
        out.append("\n".join(body) + "\n")
        freed.append(fn)
    out.append("#endif\n\nvoid test_null(void)\n{\n")
    out += ["    RUN(test_null_%s);\n" % n for n in names]
    out.append("#ifdef CTORCH_DEBUG\n")
    out += ["    RUN(test_freed_%s);\n" % n for n in freed]
    out.append("#endif\n}\n")
    return "".join(out)


def main():
    text = generate()
    if "--check" in sys.argv[1:]:
        with open(OUT) as f:
            if f.read() != text:
                print("tests/test_null.c is stale: run 'python3 tools/gen_null_tests.py' "
                      "and commit it")
                return 1
        print("tests/test_null.c is up to date")
        return 0
    with open(OUT, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
