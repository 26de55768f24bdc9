#!/usr/bin/env python3
# spans.py DIR: the instructions of each opStart..opEnd span of a callgrind run with dumps before both, and their spread.
import sys,glob,os,statistics as st
d=sys.argv[1]
files=sorted(glob.glob(os.path.join(d,'callgrind.out.*')), key=lambda p:int(p.rsplit('.',1)[1]))
vals=[]; prev=None
for p in files:
    trig='';summ=0
    for line in open(p):
        if line.startswith('desc: Trigger:'): trig=line.strip()
        elif line.startswith('summary:'): summ=float(line.split()[1])
    if 'opEnd' in trig and prev and 'opStart' in prev: vals.append(summ)
    prev=trig
m=st.mean(vals); sd=st.stdev(vals) if len(vals)>1 else 0
print('n=%d mean=%.0f sd=%.0f rel_sd=%.4f%% range=%.4f%%'%(len(vals),m,sd,sd/m*100,(max(vals)-min(vals))/m*100))
