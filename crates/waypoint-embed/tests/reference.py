# An independent NumPy forward pass of a BERT sentence encoder (mean pooling, unit
# length), used to compute the reference values in tests/encoder.rs:
#   python3 reference.py MODEL_DIR "TEXT"   (needs numpy, tokenizers, safetensors)
import sys, json, math

import numpy as np
from tokenizers import Tokenizer
from safetensors.numpy import load_file
d=sys.argv[1]; text=sys.argv[2]
cfg=json.load(open(d+'/config.json'))
w=load_file(d+'/model.safetensors')
tok=Tokenizer.from_file(d+'/tokenizer.json'); tok.no_padding()
ids=tok.encode(text).ids
def ln(x,g,b,eps=1e-12):
    m=x.mean(-1,keepdims=True); v=((x-m)**2).mean(-1,keepdims=True); return (x-m)/np.sqrt(v+eps)*g+b
from math import erf
verf=np.vectorize(erf)
x=w['embeddings.word_embeddings.weight'][ids]+w['embeddings.position_embeddings.weight'][:len(ids)]+w['embeddings.token_type_embeddings.weight'][0]
x=ln(x,w['embeddings.LayerNorm.weight'],w['embeddings.LayerNorm.bias'])
H=cfg['num_attention_heads']; hd=cfg['hidden_size']//H
for i in range(cfg['num_hidden_layers']):
    p=f'encoder.layer.{i}.'
    L=lambda n,x: x@w[p+n+'.weight'].T+w[p+n+'.bias']
    q=L('attention.self.query',x).reshape(-1,H,hd).transpose(1,0,2)
    k=L('attention.self.key',x).reshape(-1,H,hd).transpose(1,0,2)
    v=L('attention.self.value',x).reshape(-1,H,hd).transpose(1,0,2)
    s=q@k.transpose(0,2,1)/math.sqrt(hd); s=np.exp(s-s.max(-1,keepdims=True)); s/=s.sum(-1,keepdims=True)
    c=(s@v).transpose(1,0,2).reshape(-1,H*hd)
    x=ln(L('attention.output.dense',c)+x,w[p+'attention.output.LayerNorm.weight'],w[p+'attention.output.LayerNorm.bias'])
    h=L('intermediate.dense',x); h=0.5*h*(1+verf(h/math.sqrt(2)))
    x=ln(L('output.dense',h)+x,w[p+'output.LayerNorm.weight'],w[p+'output.LayerNorm.bias'])
e=x.mean(0); e/=np.linalg.norm(e)
print([round(float(t),6) for t in e[:8]])
