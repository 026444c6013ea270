package libllama

// funcs are the C functions used, as Go functions (bind fills them). The
// names are llama.h's and ggml-backend.h's; handles are uintptr.
type funcs struct {
	version              func() string // llama_version
	ggmlCommit           func() string // ggml_commit
	printSystemInfo      func() string // llama_print_system_info
	backendInit          func()        // llama_backend_init
	logSet               func(cb, userData uintptr)
	modelDefaultParams   func() ModelParams
	contextDefaultParams func() ContextParams
	supportsGPUOffload   func() bool
	maxDevices           func() uintptr

	modelLoadFromFile func(path string, p ModelParams) uintptr
	modelFree         func(model uintptr)
	modelGetVocab     func(model uintptr) uintptr
	modelNCtxTrain    func(model uintptr) int32
	modelNEmbd        func(model uintptr) int32
	modelNLayer       func(model uintptr) int32
	modelNHead        func(model uintptr) int32
	modelNHeadKV      func(model uintptr) int32
	modelNSWA         func(model uintptr) int32
	modelSize         func(model uintptr) uint64
	modelNParams      func(model uintptr) uint64
	modelDesc         func(model uintptr, buf *byte, size uintptr) int32
	modelMetaValStr   func(model uintptr, key string, buf *byte, size uintptr) int32

	vocabNTokens func(vocab uintptr) int32
	vocabBOS     func(vocab uintptr) int32
	vocabEOS     func(vocab uintptr) int32
	vocabEOT     func(vocab uintptr) int32
	vocabIsEOG   func(vocab uintptr, t int32) bool
	vocabGetText func(vocab uintptr, t int32) *byte

	initFromModel    func(model uintptr, p ContextParams) uintptr // llama_init_from_model
	free             func(ctx uintptr)
	nCtx             func(ctx uintptr) uint32
	nCtxSeq          func(ctx uintptr) uint32
	nBatch           func(ctx uintptr) uint32
	nUBatch          func(ctx uintptr) uint32
	nSeqMax          func(ctx uintptr) uint32
	getMemory        func(ctx uintptr) uintptr
	setNThreads      func(ctx uintptr, n, nBatch int32)
	setAbortCallback func(ctx uintptr, cb, data uintptr)
	attachThreadpool func(ctx, tp, tpBatch uintptr)
	tpParamsInit     func(p *byte, nThreads int32) // ggml_threadpool_params_init
	batchInit        func(nTokens, embd, nSeqMax int32) Batch
	batchFree        func(b Batch)
	decode           func(ctx uintptr, b Batch) int32
	getLogitsIth     func(ctx uintptr, i int32) *float32

	memorySeqRm     func(mem uintptr, seq, p0, p1 int32) bool
	memorySeqPosMax func(mem uintptr, seq int32) int32

	stateSeqGetSize func(ctx uintptr, seq int32) uintptr
	stateSeqGetData func(ctx uintptr, dst *byte, size uintptr, seq int32) uintptr
	stateSeqSetData func(ctx uintptr, src *byte, size uintptr, seq int32) uintptr

	backendLoadAll           func()
	backendRegByName         func(name string) uintptr
	backendRegGetProcAddress func(reg uintptr, name string) uintptr
	backendRegister          func(reg uintptr)
	backendDevCount          func() uintptr
	backendDevGet            func(i uintptr) uintptr
	backendDevName           func(dev uintptr) string
	backendDevDescription    func(dev uintptr) string
	backendDevType           func(dev uintptr) int32
	backendDevBackendReg     func(dev uintptr) uintptr
	backendRegName           func(reg uintptr) string

	// rawModelDefaults and rawContextDefaults call
	// llama_{model,context}_default_params with a buffer of the caller's
	// as the hidden result pointer (amd64's convention for structs over 16
	// bytes), so the layout check sees how many bytes the library writes;
	// nil where the convention differs.
	rawModelDefaults   func(out *byte) uintptr
	rawContextDefaults func(out *byte) uintptr
}

// symbols maps each C name to its field, for bind.
func (f *funcs) symbols() map[string]any {
	return map[string]any{
		"llama_version":                     &f.version,
		"ggml_commit":                       &f.ggmlCommit,
		"llama_print_system_info":           &f.printSystemInfo,
		"llama_backend_init":                &f.backendInit,
		"llama_log_set":                     &f.logSet,
		"llama_model_default_params":        &f.modelDefaultParams,
		"llama_context_default_params":      &f.contextDefaultParams,
		"llama_supports_gpu_offload":        &f.supportsGPUOffload,
		"llama_max_devices":                 &f.maxDevices,
		"llama_model_load_from_file":        &f.modelLoadFromFile,
		"llama_model_free":                  &f.modelFree,
		"llama_model_get_vocab":             &f.modelGetVocab,
		"llama_model_n_ctx_train":           &f.modelNCtxTrain,
		"llama_model_n_embd":                &f.modelNEmbd,
		"llama_model_n_layer":               &f.modelNLayer,
		"llama_model_n_head":                &f.modelNHead,
		"llama_model_n_head_kv":             &f.modelNHeadKV,
		"llama_model_n_swa":                 &f.modelNSWA,
		"llama_model_size":                  &f.modelSize,
		"llama_model_n_params":              &f.modelNParams,
		"llama_model_desc":                  &f.modelDesc,
		"llama_model_meta_val_str":          &f.modelMetaValStr,
		"llama_vocab_n_tokens":              &f.vocabNTokens,
		"llama_vocab_bos":                   &f.vocabBOS,
		"llama_vocab_eos":                   &f.vocabEOS,
		"llama_vocab_eot":                   &f.vocabEOT,
		"llama_vocab_is_eog":                &f.vocabIsEOG,
		"llama_vocab_get_text":              &f.vocabGetText,
		"llama_init_from_model":             &f.initFromModel,
		"llama_free":                        &f.free,
		"llama_n_ctx":                       &f.nCtx,
		"llama_n_ctx_seq":                   &f.nCtxSeq,
		"llama_n_batch":                     &f.nBatch,
		"llama_n_ubatch":                    &f.nUBatch,
		"llama_n_seq_max":                   &f.nSeqMax,
		"llama_get_memory":                  &f.getMemory,
		"llama_set_n_threads":               &f.setNThreads,
		"llama_set_abort_callback":          &f.setAbortCallback,
		"llama_attach_threadpool":           &f.attachThreadpool,
		"ggml_threadpool_params_init":       &f.tpParamsInit,
		"llama_batch_init":                  &f.batchInit,
		"llama_batch_free":                  &f.batchFree,
		"llama_decode":                      &f.decode,
		"llama_get_logits_ith":              &f.getLogitsIth,
		"llama_memory_seq_rm":               &f.memorySeqRm,
		"llama_memory_seq_pos_max":          &f.memorySeqPosMax,
		"llama_state_seq_get_size":          &f.stateSeqGetSize,
		"llama_state_seq_get_data":          &f.stateSeqGetData,
		"llama_state_seq_set_data":          &f.stateSeqSetData,
		"ggml_backend_load_all":             &f.backendLoadAll,
		"ggml_backend_reg_by_name":          &f.backendRegByName,
		"ggml_backend_reg_get_proc_address": &f.backendRegGetProcAddress,
		"ggml_backend_register":             &f.backendRegister,
		"ggml_backend_dev_count":            &f.backendDevCount,
		"ggml_backend_dev_get":              &f.backendDevGet,
		"ggml_backend_dev_name":             &f.backendDevName,
		"ggml_backend_dev_description":      &f.backendDevDescription,
		"ggml_backend_dev_type":             &f.backendDevType,
		"ggml_backend_dev_backend_reg":      &f.backendDevBackendReg,
		"ggml_backend_reg_name":             &f.backendRegName,
	}
}
