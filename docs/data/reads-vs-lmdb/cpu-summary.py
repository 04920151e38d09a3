import re,glob,os,statistics as st,sys
d=sys.argv[1]
def runs(f):
    t=open(f).read()
    blocks=t.split('### ')
    res=[]
    cur=[]
    for m in re.finditer(r'readrandom   :\s+([\d.]+) micros/op.*?\n|### cpu: user ([\d.]+) sys ([\d.]+) elapsed ([\d.]+)',t):
        if m.group(1): cur.append(float(m.group(1)))
        else:
            res.append((cur,float(m.group(2))+float(m.group(3)),float(m.group(4)))); cur=[]
    return res
for name in ['kv-8388608-hash0','kv-8388608-hash1','kv-268435456-hash0','kv-268435456-hash1','lmdb']:
    r=runs(f'{d}/{name}.txt'); b=runs(f'{d}/{name}-base.txt')
    base=st.mean(x[1] for x in b)
    cpu=[(x[1]-base)/1e6*1e6 for x in r]  # per op in us: (cpu-base)/1e6 ops *1e6
    print(name, 'wall us/op passes:', [x[0] for x in r], 'cpu us/op per run:', [round(c,2) for c in cpu], 'base cpu s', round(base,2))
