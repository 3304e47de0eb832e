/* `voxlabel label --multilabel`: labelling and per-class clean-up of a class map (cli/label_multilabel.c). */
#ifndef VL_LABEL_MULTILABEL_H
#define VL_LABEL_MULTILABEL_H

/* 1 when argv holds --multilabel (before a lone "--"), so that cmd_label hands the run over. */
int label_multilabel_requested(int argc, char **argv);

/* The whole `voxlabel label --multilabel` run; returns the exit code. */
int label_multilabel_run(int argc, char **argv);

#endif
