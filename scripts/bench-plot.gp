# SPDX-License-Identifier: GPL-2.0
# Instructions per I/O by stack, base against ours, from the plot.dat of
# scripts/bench-report.py.  Usage: gnuplot -e "dat='plot.dat'; out='bench.png'" bench-plot.gp
set terminal pngcairo size 1200,600 font ",10"
set output out
set title "fio io_uring 4k random reads QD16 on null_blk, QEMU -icount: guest instructions per I/O (lower is cheaper)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set datafile missing "-"
set key top left
set ylabel "instructions per I/O"
set yrange [0:*]
set xtics rotate by -30 nomirror
set grid ytics
plot dat using 2:xtic(1) title "base, interrupt", \
     '' using 3 title "base, polled", \
     '' using 4 title "ours, interrupt", \
     '' using 5 title "ours, polled"
