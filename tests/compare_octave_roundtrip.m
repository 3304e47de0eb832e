% Oracle data for compare_octave_roundtrip.sh: a random mask, Octave bwlabeln in both axis conventions, a
% permuted labelling, a one-voxel change, and regionprops (Area, Centroid, BoundingBox) written with the column
% names MATLAB's writetable gives a regionprops3 table. Octave has no writetable, so the CSV is printed by hand.
pkg load image
rand("state", 20260);
H = 23; W = 31; D = 17;                        % rows (y), columns (x), slices (z)
BW = rand(H, W, D) < 0.25;
L = bwlabeln(BW, 6);
save("-v7", "L.mat", "L");
Lxy = bwlabeln(permute(BW, [2 1 3]), 6);       % V(x,y,z), as niftiread would give it
save("-v7", "Lxy.mat", "Lxy");
fid = fopen("mask.raw", "w");                  % x fastest, as voxlabel reads raw files
fwrite(fid, permute(uint8(BW), [2 1 3]), "uint8");
fclose(fid);

n = max(L(:));
perm = mod((1:n) * 7919, n) + 1;               % a bijection of 1..n that follows no ordering rule
Lperm = L;
Lperm(L > 0) = perm(L(L > 0));
save("-v7", "Lperm.mat", "Lperm");

% One voxel of the largest component set to background; its 0-based (x, y, z) is what compare must report.
sizes = accumarray(L(L > 0), 1);
[~, biggest] = max(sizes);
idx = find(L == biggest, 1, "last");
[r, c, p] = ind2sub(size(L), idx);
Lone = L;
Lone(idx) = 0;
save("-v7", "Lone.mat", "Lone");
fid = fopen("one_voxel.txt", "w");
fprintf(fid, "(%d, %d, %d)\n", c - 1, r - 1, p - 1);
fclose(fid);

props = regionprops(L, "Area", "Centroid", "BoundingBox");
fid = fopen("regionprops.csv", "w");
fprintf(fid, "Volume,Centroid_1,Centroid_2,Centroid_3,BoundingBox_1,BoundingBox_2,BoundingBox_3,");
fprintf(fid, "BoundingBox_4,BoundingBox_5,BoundingBox_6\n");
for k = 1:numel(props)
  fprintf(fid, "%d,%.15g,%.15g,%.15g,%.15g,%.15g,%.15g,%.15g,%.15g,%.15g\n", props(k).Area, props(k).Centroid, ...
          props(k).BoundingBox);
end
fclose(fid);
printf("%d components\n", n);
