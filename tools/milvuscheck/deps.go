package milvuscheck

// The generated program imports these; naming them here keeps them in go.mod and go.sum.
import (
	_ "github.com/milvus-io/milvus/client/v2/entity"
	_ "github.com/milvus-io/milvus/client/v2/index"
	_ "github.com/milvus-io/milvus/client/v2/milvusclient"
)
