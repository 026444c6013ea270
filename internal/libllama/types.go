package libllama

// Token, position and sequence ids are C int32 (llama_token, llama_pos,
// llama_seq_id).

// ModelParams is struct llama_model_params (80 bytes).
type ModelParams struct {
	Devices             uintptr  //  0 ggml_backend_dev_t *: NULL-terminated list, NULL = all
	TensorBuftOverrides uintptr  //  8 const struct llama_model_tensor_buft_override *
	NGPULayers          int32    // 16 layers in VRAM; negative: all
	SplitMode           int32    // 20 enum llama_split_mode
	LoadMode            int32    // 24 enum llama_load_mode
	LazyMode            int32    // 28 enum llama_lazy_mode
	MainGPU             int32    // 32
	_                   int32    // 36 padding
	TensorSplit         *float32 // 40 const float *, llama_max_devices() entries
	ProgressCallback    uintptr  // 48
	ProgressUserData    uintptr  // 56
	KVOverrides         uintptr  // 64
	VocabOnly           bool     // 72
	CheckTensors        bool     // 73
	UseExtraBufts       bool     // 74
	NoHost              bool     // 75
	NoAlloc             bool     // 76
	LoadMTP             bool     // 77
	_                   [2]byte  // 78 padding
}

// ContextParams is struct llama_context_params (160 bytes).
type ContextParams struct {
	NCtx              uint32  //   0 text context, all sequences together
	NBatch            uint32  //   4 largest batch llama_decode accepts
	NUBatch           uint32  //   8 micro-batch: one graph evaluation
	NSeqMax           uint32  //  12 sequences (streams when not unified)
	NRSSeq            uint32  //  16 recurrent-state snapshots
	NOutputsMax       uint32  //  20
	NOutputsMaxPerSeq uint32  //  24
	NThreads          int32   //  28
	NThreadsBatch     int32   //  32
	CtxType           int32   //  36 enum llama_context_type
	RopeScalingType   int32   //  40
	PoolingType       int32   //  44
	AttentionType     int32   //  48
	FlashAttnType     int32   //  52 enum llama_flash_attn_type
	RopeFreqBase      float32 //  56
	RopeFreqScale     float32 //  60
	YarnExtFactor     float32 //  64
	YarnAttnFactor    float32 //  68
	YarnBetaFast      float32 //  72
	YarnBetaSlow      float32 //  76
	YarnOrigCtx       uint32  //  80
	DefragThold       float32 //  84
	CbEval            uintptr //  88
	CbEvalUserData    uintptr //  96
	TypeK             int32   // 104 enum ggml_type
	TypeV             int32   // 108
	AbortCallback     uintptr // 112
	AbortCallbackData uintptr // 120
	Embeddings        bool    // 128
	OffloadKQV        bool    // 129
	NoPerf            bool    // 130
	OpOffload         bool    // 131
	SWAFull           bool    // 132
	KVUnified         bool    // 133
	_                 [2]byte // 134 padding
	Samplers          uintptr // 136
	NSamplers         uintptr // 144
	CtxOther          uintptr // 152
}

// Batch is struct llama_batch (56 bytes). Its arrays live in C memory
// (llama_batch_init) and hold NTokens entries each.
type Batch struct {
	NTokens int32   //  0
	_       int32   //  4 padding
	Token   *int32  //  8 llama_token *
	Embd    uintptr // 16 float * (unused: NULL)
	Pos     *int32  // 24 llama_pos *
	NSeqID  *int32  // 32 int32_t *
	SeqID   **int32 // 40 llama_seq_id **
	Logits  *int8   // 48 int8_t *: output the logits of this token
}

// Enumerations of llama.h used here.
const (
	SplitNone  = 0 // LLAMA_SPLIT_MODE_NONE: one GPU
	SplitLayer = 1 // LLAMA_SPLIT_MODE_LAYER: layers and KV across GPUs
	SplitRow   = 2 // LLAMA_SPLIT_MODE_ROW: rows across GPUs

	FlashAttnAuto     = -1 // LLAMA_FLASH_ATTN_TYPE_AUTO
	FlashAttnDisabled = 0
	FlashAttnEnabled  = 1

	LoadModeAuto      = -1 // LLAMA_LOAD_MODE_AUTO: mmap unless a device cannot
	LoadModeNone      = 0  // read into memory of its own (no mmap)
	LoadModeMmap      = 1
	LoadModeMlock     = 2
	LoadModeMmapMlock = 3
	LoadModeDirectIO  = 4

	TypeF32  = 0  // GGML_TYPE_F32
	TypeF16  = 1  // GGML_TYPE_F16
	TypeQ8_0 = 8  // GGML_TYPE_Q8_0
	TypeBF16 = 30 // GGML_TYPE_BF16
)

// LoadModes are enum llama_load_mode by llama.cpp's names of its values
// (llama_load_mode_name; its -lm/--load-mode).
var LoadModes = map[string]int32{
	"auto": LoadModeAuto, "none": LoadModeNone, "mmap": LoadModeMmap,
	"mlock": LoadModeMlock, "mmap+mlock": LoadModeMmapMlock, "dio": LoadModeDirectIO,
}

// Pinned layout of this header: sizes and the offsets the layout check
// reads (TestLayout holds the Go structs to them).
const (
	modelParamsSize   = 80
	contextParamsSize = 160
	batchSize         = 56
	// modelParamsExtent is one past the last byte a C compiler must write
	// when it returns the struct: the six bools end at 78, the tail is
	// padding it may skip.
	modelParamsExtent = 78
)
